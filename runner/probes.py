"""HTTP probes of a point's server: readiness on a health URL, Prometheus scrapes of /metrics.

Plain urllib: the executor that runs them starts once per point and must start fast.
"""

from __future__ import annotations

import ipaddress
import subprocess
import time
import urllib.error
import urllib.request
from urllib.parse import urlsplit


class ProbeError(Exception):
    """A probe failed (connection refused, timeout, HTTP error)."""


def _opener(url: str) -> urllib.request.OpenerDirector:
    host = urlsplit(url).hostname or ""
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    # A proxy from the environment must not capture requests to this machine's own server.
    return (
        urllib.request.build_opener(urllib.request.ProxyHandler({}))
        if loopback
        else urllib.request.build_opener()
    )


def get(url: str, *, timeout_s: float) -> tuple[int, str]:
    """GET `url`; returns (status, body text).

    Raises:
        ProbeError: when there is no HTTP answer at all.
    """
    try:
        with _opener(url).open(url, timeout=timeout_s) as resp:
            return int(resp.status), resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return int(exc.code), ""
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise ProbeError(f"{type(exc).__name__}: {reason}") from exc


def wait_ready(
    url: str, *, timeout_s: float, interval_s: float, server: subprocess.Popen[bytes] | None
) -> str | None:
    """Poll `url` until it answers 200. Returns None when ready, else why it is not.

    Stops early when the server process exits.
    """
    deadline = time.monotonic() + timeout_s
    last = "no answer yet"
    while True:
        if server is not None and server.poll() is not None:
            return f"server exited with code {server.returncode} before {url} answered (see serve.stderr.log)"
        try:
            status, _ = get(url, timeout_s=min(5.0, max(interval_s, 0.5)))
            if status == 200:
                return None
            last = f"HTTP {status}"
        except ProbeError as exc:
            last = str(exc)
        if time.monotonic() >= deadline:
            return f"{url} not ready after {timeout_s:g} s (last: {last})"
        time.sleep(interval_s)


def scrape(url: str, *, timeout_s: float = 10.0) -> str:
    """The Prometheus text exposition at `url`.

    Raises:
        ProbeError: when the scrape fails (connection, non-200 status).
    """
    status, text = get(url, timeout_s=timeout_s)
    if status != 200:
        raise ProbeError(f"HTTP {status}")
    return text
