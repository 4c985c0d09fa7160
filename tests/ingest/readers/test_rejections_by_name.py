"""Say what a file is: a known tool's output that cannot give a point is refused naming the tool,
its version and why; a text file is never reported as invalid JSON.

Files: tests/fixtures/wild/aiperf_failed (assembled from a real aiperf 0.8.0 export, PROVENANCE.md
there says how), tests/fixtures/wild/mlperf_loadgen (real), tests/fixtures/wild/trtllm_bench
(real)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ingest.errors import ParseError
from ingest.pipeline import ingest_paths
from ingest.readers.base import SourceFile
from ingest.reading import parse_json
from ingest.store import Store

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild"


def _rejected(tmp_path: Path, root: Path) -> list[tuple[str, str, str, str]]:
    st_ = Store(tmp_path / "store")
    rep = ingest_paths([root], st_, run_id="named")
    assert st_.points(["named"]).height == 0
    return sorted(
        (r.path, r.field, r.reason, r.reader)
        for r in rep.rejected
        if not r.path.endswith("PROVENANCE.md")
    )


def test_aiperf_0_8_export_whose_requests_all_failed(tmp_path: Path) -> None:
    assert _rejected(tmp_path, WILD / "aiperf_failed") == [
        (
            "all_requests_timed_out/profile_export_aiperf.json",
            "error_request_count",
            "aiperf 0.8.0 export: all 20 requests failed (TimeoutError); "
            "no successful request, so no point",
            "aiperf",
        )
    ]


def test_mlperf_loadgen_summary_and_detail_log(tmp_path: Path) -> None:
    rejected = _rejected(tmp_path, WILD / "mlperf_loadgen")
    assert [(path, reader) for path, _, _, reader in rejected] == [
        ("mlperf_log_detail.txt", "mlperf_loadgen"),
        ("mlperf_log_summary.txt", "mlperf_loadgen"),
    ]
    detail, summary = rejected[0][2], rejected[1][2]
    assert summary.startswith(
        "MLPerf loadgen summary: not an LLM-serving sweep (scenario Offline, SUT PySUT, "
        "result VALID;"
    )
    # the detail log's `:::MLLOG` lines name the loadgen version
    assert detail.startswith(
        "MLPerf loadgen detail log: not an LLM-serving sweep (loadgen 4.0 @ fa4fe53e53, "
        "scenario Offline, SUT PySUT, result VALID;"
    )


def test_a_trtllm_console_report_is_not_called_invalid_json(tmp_path: Path) -> None:
    log = (WILD / "trtllm_bench" / "result_128_128_30000.txt").read_bytes()
    # A log that stopped before its report: recognised as trtllm-bench's, named, not "invalid JSON".
    folder = tmp_path / "cut"
    folder.mkdir()
    (folder / "trtllm.log").write_bytes(log[: log.index(b"= ENGINE DETAILS")])
    ((path, field, reason, reader),) = _rejected(tmp_path, folder)
    assert (path, field, reader) == ("trtllm.log", "PERFORMANCE OVERVIEW", "trtllm_bench")
    assert reason.startswith("trtllm-bench 0.16.0 console log: no PERFORMANCE OVERVIEW section")
    assert "JSON" not in reason


def _src(data: bytes) -> SourceFile:
    return SourceFile(Path("x.log"), "x.log", "", data)


@pytest.mark.parametrize(
    "first_line",
    [
        b"[TensorRT-LLM] TensorRT-LLM version: 0.16.0",
        b"[07/11/2025-08:12:24] [TRT-LLM] [I] Preparing to run throughput benchmark...",
        b"[INFO] server started",
        b"[2025-05-30 20:37:06] starting",
    ],
)
def test_text_opening_with_a_bracketed_tag_is_text(first_line: bytes) -> None:
    assert parse_json(_src(first_line + b"\nmore log\n")) is None


@pytest.mark.parametrize("broken", [b"[1, 2", b'[{"a": 1}, ]', b"[1, 2,, 3]", b'{"a": }'])
def test_broken_json_is_still_invalid_json(broken: bytes) -> None:
    with pytest.raises(ParseError) as err:
        parse_json(_src(broken))
    assert err.value.reason.startswith("invalid JSON")


_SCALARS = st.one_of(
    st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False, allow_infinity=False)
)


@given(st.lists(_SCALARS, max_size=5))
def test_a_json_array_still_parses(values: list[object]) -> None:
    assert parse_json(_src(json.dumps(values).encode())) == values


def _not_array_content(tag: str) -> bool:
    """What no JSON array of scalars holds unquoted: more than numbers, true/false/null, commas."""
    return re.sub(r"\b(?:true|false|null|Infinity|NaN)\b|[-+0-9eE.,\s]", "", tag) != ""


_TAG_CHARS = st.characters(min_codepoint=33, max_codepoint=126, exclude_characters='[]{}"')


@given(
    st.text(alphabet=_TAG_CHARS, min_size=1, max_size=20).filter(_not_array_content),
    st.text(max_size=40),
)
def test_a_tag_with_words_is_never_invalid_json(tag: str, rest: str) -> None:
    data = f"[{tag}] {rest}".encode()
    try:
        parse_json(_src(data))
    except ParseError as exc:  # pragma: no cover - the property under test
        pytest.fail(f"{data!r} reported as {exc.reason}")
