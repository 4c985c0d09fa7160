"""Render docs/reliability.md from the figures the reliability suite wrote.

    uv run pytest tests/reliability -q          # writes tests/reliability/.out/figures.json
    uv run python -m tests.reliability.render_doc

Every number in the document comes from that file; sections the last runs did not cover say so.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from tests.reliability.figures import FIGURES_PATH, REPO

DOC = REPO / "docs" / "reliability.md"
SECTIONS = {
    "fuzz": ("Fuzzing", "tests/reliability/test_fuzz.py"),
    "hostile": ("Hostile corpus", "tests/reliability/test_hostile.py"),
    "crash": ("Crash safety", "tests/reliability/test_crash.py"),
    "store_faults": (
        "Full disk, read-only store, older stores",
        "tests/reliability/test_store_faults.py",
    ),
    "concurrency": ("Concurrency", "tests/reliability/test_concurrency.py"),
    "shared_store": (
        "A store shared by several machines, on S3",
        "tests/reliability/test_shared_store.py",
    ),
    "store_versions": ("Store versions and caches", "tests/reliability/test_store_versions.py"),
    "load": ("Load", "tests/reliability/test_load.py"),
    "security": ("Security", "tests/reliability/test_security.py"),
    "browser_xss": ("Inert strings in a browser", "tests/reliability/test_browser_xss.py"),
    "defects": ("Defects found from outside, and hardening", "tests/reliability/test_defects.py"),
    "round_three": (
        "Round three: fourteen ways in, and the fuzz of every callback and route",
        "tests/reliability/test_round_three.py",
    ),
}


def _cmd(path: str, env: str = "") -> str:
    if path.endswith("test_browser_xss.py"):  # chromium: the browser tier
        return f"`{env}uv run pytest {path} -q -m browser -n 0`"
    # `pytest` alone runs the fast tier on two workers (pyproject addopts); this is the tier CI runs
    # one test at a time (scripts/test.sh).
    return f"`{env}uv run pytest {path} -q -m reliability -n 0`"


def _status(sec: dict[str, Any]) -> str:
    t = sec["tests"]
    parts = [f"{t.get('passed', 0)} passed"]
    for k in ("failed", "xfailed", "skipped"):
        if t.get(k):
            parts.append(f"{t[k]} {k}")
    return f"{', '.join(parts)} in {t.get('seconds', 0):.0f} s ({sec['run_at']}, commit {sec['commit']})"


def _n(x: Any) -> str:
    return f"{x:,}" if isinstance(x, int) else str(x)


def _fuzz(f: dict[str, Any]) -> list[str]:
    cases = f.get("reader_cases", 0) + f.get("pipeline_cases", 0) + f.get("zip_cases", 0)
    return [
        f"- **{_n(cases)} fuzz cases run, 0 uncaught exceptions.** {_n(f.get('reader_cases', 0))} "
        f"mutations of the {_n(f.get('fixture_files', 0))} real fixture files (every file under "
        f"`tests/fixtures/`, bytes and JSON structure) went through all {f.get('file_readers', '?')} "
        f"file readers and {f.get('unit_readers', '?')} unit readers ({_n(f.get('reader_reads', 0))} "
        "reads by a reader that claimed the input); every failure was a `ParseError`/`SchemaError` "
        f"with a reason ({_n(f.get('reader_rejects_with_reason', 0))} of them), and everything that "
        "normalised also converted to the store's Arrow schema.",
        f"- {_n(f.get('pipeline_cases', 0))} mutated units of the {f.get('fixture_units', '?')} fixture "
        f"directories and {_n(f.get('zip_cases', 0))} mutated zip artifacts went through "
        "`ingest_paths` into a store that already held them: no exception, "
        f"{_n(f.get('pipeline_rejects_with_reason', 0))} rejects, each with a reason, the other run "
        "unchanged, and no stored row lost unless a newer version of its file replaced it.",
        "- The example counts are fixed and derandomized (the CI run is repeatable); "
        "`PARETOLENS_FUZZ_SCALE=10` runs ten times as many.",
    ]


def _hostile(f: dict[str, Any]) -> list[str]:
    outcomes = {k.removeprefix("outcome_"): v for k, v in f.items() if k.startswith("outcome_")}
    return [
        f"- **{f.get('files', '?')} hand-made hostile files** in `tests/reliability/hostile/` "
        f"({f.get('zips', '?')} of them zips), each ingested alone into a store holding another run, "
        f"and then all together with three good aggregates (outcomes over both passes: "
        + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
        + ").",
        f"- **Inputs rejected with nothing lost:** every file got the outcome its manifest names, "
        f"{_n(f.get('base_rows_checked', 0))} stored rows were checked unchanged after the hostile "
        f"ingests (0 lost), and the batch of {f.get('batch_files', '?')} files stored its "
        f"{f.get('batch_good_rows_stored', '?')} good rows with {f.get('batch_rejects', '?')} rejects.",
        f"- Zip extraction stayed inside its target for all {f.get('zips_contained', '?')} archives "
        f"({f.get('zips_refused', '?')} refused by `safe_extract`); no symlink was created.",
    ]


def _crash(f: dict[str, Any]) -> list[str]:
    states = f.get("states_after_kill", {})
    kinds = f.get("boundaries", {})
    return [
        f"- **{f.get('trials_survived', 0)} of {f.get('trials', 0)} kill -9 trials survived, "
        "nothing lost, no doubled series.** "
        f"{f.get('boundary_trials', 0)} trials killed the ingest right after each of its "
        f"{f.get('boundary_trials', 0)} store steps in turn (enumerated through the "
        "`ingest.store.STEP_HOOK` test hook: "
        + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
        + f"; the Delta commit, step {f.get('commit_step', '?')}, is the commit point), and "
        f"{f.get('wall_clock_trials', 0)} at seeded random moments of a "
        f"{f.get('ingest_seconds', '?')} s ingest of {f.get('batch_files', '?')} files "
        f"({f.get('batch_points', '?')} points and {_n(f.get('batch_series', 0))} series samples "
        f"in {f.get('batch_runs', '?')} runs: a zip, a changed and a fixed file), which land "
        "inside delta-rs's writing of data files and of the log entry.",
        "- After every kill the store opened and held, whole, either what it held before the "
        "ingest or what the uninterrupted ingest leaves (points, series, rejects, catalog; "
        f"{', '.join(f'{k} {v}' for k, v in sorted(states.items()))}): every kill before the "
        "commit left it as before, every kill after it as after. A writer after it saw the same "
        f"state ({_n(f.get('stale_temp_files', 0))} data files of killed writers that no commit "
        "names were left, never read), and the same ingest run again left exactly what an "
        "uninterrupted ingest leaves.",
    ]


def _store_faults(f: dict[str, Any]) -> list[str]:
    states = f.get("injected_error_states", {})
    out = [
        f"- **A disk error after every write step:** an `OSError` (EIO or ENOSPC) injected "
        f"after each of the {f.get('injected_error_boundaries', '?')} steps of the same batch "
        f"in turn ({f.get('injected_errors_survived', 0)} survived; "
        f"{', '.join(f'{k} {v}' for k, v in sorted(states.items()))}): before the commit point "
        "nothing was committed and the store held what it held. Every failure raised "
        "`StoreWriteError` naming the store, the cause and what the store holds.",
    ]
    if f.get("full_disk_trials"):
        out.append(
            f"- **A full disk:** the store on a 24 MiB tmpfs filled to "
            f"{f.get('full_disk_trials')} levels of free space (0 B to 16 MiB): "
            f"{f.get('full_disk_failures', 0)} ingests hit ENOSPC (the last step each completed: "
            + ", ".join(f"`{s}`" for s in f.get("full_disk_failed_after", []))
            + ") and each left the store as before, said `No space left on "
            "device ... nothing of this change was stored ... free space on that file system`, "
            f"and completed once space was freed; {f.get('full_disk_completed', 0)} had room and "
            "completed."
        )
    if f.get("read_only_refused"):
        out.append(
            "- **A read-only store** (a read-only bind mount; root ignores file modes): the "
            "ingest is refused before anything is written, the store still reads as before, and "
            f"`paretolens ingest` exits {f.get('read_only_cli_exit', '?')} without a traceback: "
            f'"{f.get("read_only_cli_message", "")}". A change committed before the store '
            "became read-only is read whole from it."
        )
    if f.get("legacy_store_upgraded"):
        out.append(
            "- **Stores written before Delta Lake** (one Parquet file per run, the catalog, the "
            "rejects): opening one is refused with a message naming `paretolens store upgrade`; "
            "`tests/reliability/legacy_store/` (written by the store code of commit d1bf94a, with "
            "a run id from before the rule) upgraded in one commit reads its "
            f"{f.get('legacy_points_kept', '?')} points, series and rejects unchanged and takes "
            "a new ingest."
        )
    return out


def _concurrency(f: dict[str, Any]) -> list[str]:
    return [
        f"- {f.get('rounds', 0)} rounds of {f.get('writer_processes', 0) // max(1, f.get('rounds', 1))} "
        f"writer processes ({f.get('ingest_batches', 0)} ingests) offering {_n(f.get('files_offered', 0))} "
        "overlapping files of the same 5 runs: **exactly the union landed** "
        f"({_n(f.get('union_points', 0))} points; {_n(f.get('duplicate_offers_skipped', 0))} "
        "duplicate offers skipped, none doubled).",
        f"- A reader process read the store {_n(f.get('reader_passes', 0))} times meanwhile "
        f"(catalog, every run's points, rejects, series, a lazy filter): "
        f"**{f.get('reader_errors', 0)} errors**, no doubled row, no run's count going down.",
    ]


def _load(f: dict[str, Any]) -> list[str]:
    out = [
        f"- **{f.get('users', 0)} concurrent simulated users for {f.get('seconds', 0):.0f} s**, "
        f"think time {f.get('think_seconds', ['?', '?'])[0]}-{f.get('think_seconds', ['?', '?'])[1]} s, "
        f"{_n(f.get('requests', 0))} requests, **{f.get('errors', 0)} errors**; the run page is "
        f"{f.get('points_in_big_run', '?')} points; load average during the run "
        f"{f.get('load_average', 0):.1f} on 2 CPUs.",
        "",
        "| request | n | server p50 (ms) | server p95 (ms) | target p95 | server wall p95 (ms) | client p95 (ms) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    targets = f.get("targets_p95_ms", {})
    for kind, r in f.get("by_kind", {}).items():
        t = targets.get(kind)
        out.append(
            f"| {kind} | {r['n']} | {r['server_p50_ms']} | {r['server_p95_ms']} | "
            f"{f'<= {t:.0f}' if t else ''} | {r.get('server_wall_p95_ms', '')} | {r['client_p95_ms']} |"
        )
    out += [
        "",
        "Server time is the CPU time of the request's thread (issue 6's targets are server time); "
        "wall-clock server and client latency include queueing for the GIL and the CPU under 50 "
        "users and are reported, bounded only loosely (p95 <= 3 s overall).",
        "- With a 1,000-point run in the store, the same mix is measured end to end (client "
        "p50/p95/p99 against the targets, with the server's CPU, run-queue and GIL waits and a "
        "profile) by `uv run --group bench python -m benchmarks.run --only load` "
        "(`benchmarks/suite_load.py`); its figures and what stands in the way of the targets are "
        "in `benchmarks/RESULTS.md`.",
        f"- **Memory flat:** RSS (median) {f.get('rss_mb_first_third', '?')} MB in the first "
        f"third of the run while the view caches fill, {f.get('rss_mb_middle_third', '?')} MB in "
        f"the middle third, {f.get('rss_mb_last_third', '?')} MB in the last "
        f"({f.get('rss_samples', '?')} samples; the bound is +10% + 20 MB).",
    ]
    return out


def _security(f: dict[str, Any]) -> list[str]:
    return [
        f"- State-changing routes: {', '.join(f'`{r}`' for r in f.get('state_changing_routes', []))} "
        "(no upload or delete route exists; a new one fails the route inventory test). "
        f"{f.get('refused_requests', 0)} requests without the token, with a wrong or empty one, or "
        "with it in the query string were refused with 403, and the store stayed byte-identical; "
        f"{f.get('refused_callbacks', 0)} launch/cancel/fetch callback calls without the token "
        "were refused too.",
        f"- Secrets (app token, GitHub token, a wrong guess) searched in {f.get('responses_scanned', 0)} "
        f"responses (every page layout, every export in every format, refusals, 404/400/405/500 "
        f"pages), {f.get('log_records_scanned', 0)} server log records and "
        f"{f.get('store_files_scanned', 0)} store files: not found.",
        "- The server binds 127.0.0.1 by default (settings; the CLI in tests/paretolens/test_serve_cmds.py).",
        "- With no token configured, a cross-site form can neither launch, cancel nor fetch (403).",
        f"- Uploads: there is no upload route; request bodies over "
        f"{f.get('request_body_limit_bytes', 0) / 2**20:.0f} MiB get 413; ingest refuses files over "
        "64 MiB, archives declaring over 2 GiB (nested zips share the budget), and zips "
        "compressing over 200:1.",
    ]


def _browser(f: dict[str, Any]) -> list[str]:
    fields = f.get("browser_payload_fields")
    return [
        f"- {f.get('browser_pages_checked', 0)} pages (index, run, points, compare) in headless "
        f"chromium with script payloads in {', '.join(fields) if fields else 'the result strings'}: "
        f"nothing executed, no alert, no payload error in the console, and "
        f"{f.get('browser_literals_shown', 0)} payload strings shown literally as text.",
    ]


def _defects(f: dict[str, Any]) -> list[str]:
    return [
        f"- Issue 17's nine reproduced defects and its hardening items, one test each "
        f"({f.get('checks', 0)} passed checks; every test failed before its fix):",
        "  - run ids: one rule (`ingest.store.RUN_ID_RULE`: a letter or digit, then letters, digits "
        "and `. _ : @ + -`, at most 200), applied at ingest with a suggested id (`ingest` exits 2: "
        "`Pass --run-id sweep-2026-01-retry`); ids of older stores ('sweep 2026-01 (retry)') still "
        "open their pages, the index and exports (`is_readable_run_id`);",
        "  - a kill after a run's series file is renamed and before its points file is: the ingest "
        "run again replaces those series instead of adding them twice;",
        "  - cancelling an interrupted job keeps the outcome its finished points wrote and ingests "
        "their results; only the rest is cancelled;",
        "  - CSV (web and CLI, one renderer `analysis.tables.csv_text`): text cells starting with "
        "`= + - @`, tab or CR get a leading `'`; numbers stay numbers;",
        "  - markdown (compare page, PR block, `--format markdown`): result-file text has its "
        "metacharacters escaped (`md_text`), so a `[text](url)` stays text;",
        "  - special files (FIFOs, devices, sockets) are refused by name, in a directory too, without "
        "being opened for reading (O_NONBLOCK); every read stops at the 64 MiB cap whatever size the "
        "file reports;",
        "  - no 500 for an unknown job point, a token that is not a string, a 1 MB search string or "
        "`/_dash-component-suites/../` (404); an unexpected error logs at most a few kB;",
        "  - a Host allowlist (`PARETOLENS_ALLOWED_HOSTS`, loopback names and the bound address by "
        "default): any other Host gets 400 (DNS rebinding);",
        "  - string fields over 4,096 characters are rejected naming the field; query strings over "
        "8 KiB and paths over 2 KiB get 414, bodies over 8 MiB 413, an index search over 200 "
        "characters is dropped with a notice; after 5 wrong tokens an address is refused (429, "
        "`Retry-After`) for 1 s, doubling per further miss up to 5 min.",
    ]


def _shared_store(f: dict[str, Any]) -> list[str]:
    return [
        "- Two `paretolens ingest` processes started as two machines (own working directory, "
        "home, cache and temporary folder) into one run, sharing some files: every row exactly "
        f"once on a local store ({f.get('local_two_machines_rows', '?')} points) and on S3 "
        f"({f.get('s3_two_machines_rows', '?')} points; moto's S3 server from PyPI, which "
        "refuses a second conditional put as S3 does). Two writer threads and two writer "
        "processes on each lose and double nothing; `store log` and `store undo` go back to "
        "before a bad ingest.",
    ]


def _store_versions(f: dict[str, Any]) -> list[str]:
    return [
        "- Run ids whose old file keys collided (`a:b`, `b64-YTpi`) keep their own rows "
        f"({f.get('colliding_ids_rows_each', '?')} each); an old store whose file held both is "
        "split by the upgrade. A running server sees a commit whose writer was killed right "
        "after it, and a page tree prerendered before an ingest is never handed out after it "
        "(every cache keys on the store's committed version).",
    ]


def _round_three(f: dict[str, Any]) -> list[str]:
    statuses = ", ".join(f"{k}: {_n(v)}" for k, v in (f.get("fuzz_statuses") or {}).items())
    return [
        f"- Issue 29's items 2-8 and 11-14, one test each with the issue's repro as input "
        f"({f.get('checks', 0)} passed checks; every test failed before its fix; items 1, 9 and "
        "10 belong to the store's move to Delta Lake):",
        "  - YAML: every document the project reads goes through `ingest.untrusted.yaml_load.load_yaml`, "
        "which refuses aliases expanding to over 10,000 nodes and recursive aliases before building "
        "anything: the 1 KB billion-laughs `paretolens.yaml` is a reject naming it (the good files "
        "beside it are stored), the same as a vLLM `--config` rejects that run directory only, and "
        "as the launch options document it stops the app at start with the file named (launching "
        "on) or shows on the launch panel while pages load as usual (launching off);",
        "  - the CLI prints every string as written (`InertConsole`: no rich markup, control "
        "characters escaped): `a[/x].md` no longer crashes `ingest`, `[bold red]b.json` keeps its "
        "brackets;",
        "  - ESC, BEL, NUL and other C0/C1 controls from file names and model strings are written as "
        "`\\x1b`-style escapes in the terminal table, `rejects`, `--format csv/markdown` and "
        "`/export/*.csv|md`;",
        "  - an unreadable subdirectory is a reject (`locked/: cannot read directory: Permission "
        "denied ...`; tested as `nobody`);",
        "  - zips: one byte budget per batch (nested zips included; a zip bomb or a zip over what "
        "is left is refused naming the zip and the budget while the good files beside it are "
        "stored), members read one at a time from the archive without unpacking it (at most what a "
        "member declares is passed on; only the nested zip being read is on disk), and each "
        "ingest's temporary space locked for its life and swept by the next ingest after a kill -9 "
        "during extraction;",
        "  - identity strings (model, hw, framework, spec method, image, labels, ...) holding a "
        "control character are rejects naming the field; the pruned snippet's comments are escaped "
        "and the dispatch line is `shlex.join` of its words, so a newline in a result string can "
        "no longer add `evil-entry:` to `/export/pruned.yaml` or a line to `/export/pruned.txt`;",
        "  - a 300-character run id (page, `/embed`, `baseline=`) is a run not in the store, "
        "`/export/history.*` without `arm`/`at` is a 400 saying so (`paretolens table history` "
        "exits 2), and a failing callback request that is not shaped as the callback or carries "
        "values of the wrong type is a 400 with one log line (`dashboard/forged.py`);",
        "  - wrong tokens sent by another site's page (`Origin`/`Sec-Fetch-Site`) are refused "
        "before the throttle counts them: the real user on 127.0.0.1 is not locked out;",
        "  - cancel during the finish: the final state is decided once under the job's record "
        "lock and the catalog is written from it; a job whose every point succeeded is succeeded;",
        f"  - a run with 100k rejects: the run page lists 50 per banner (the rest counted per reason, "
        f"the full CSV linked) and 1,000 in the rejects grid; largest HTML or layout response "
        f"{_n(f.get('rejects_page_bytes', 0))} bytes (was 20.5 MB and 41 MB), all four requests "
        f"{f.get('rejects_page_s', '?')} s;",
        "  - a starting worker allows a liveness look (which holds the worker lock for a moment) "
        "up to a second instead of giving up.",
        f"- **Fuzz: {_n(f.get('fuzz_requests', 0))} requests, no 500.** "
        f"{_n(f.get('fuzz_callback_posts', 0))} posts to all {f.get('fuzz_callbacks', '?')} Dash "
        "callbacks (renderer-shaped bodies carrying odd values: empty, 300 characters, unicode and "
        "controls, huge and negative numbers, lists, dicts, nested junk; and broken bodies), then "
        "every page with its layout and every export with long, repeated (50x) and unicode "
        "parameters on every query key, and the API and asset routes with odd path segments and "
        f"bodies. Statuses: {statuses}. No traceback logged; each refusal one short line.",
    ]


RENDER = {
    "shared_store": _shared_store,
    "store_versions": _store_versions,
    "fuzz": _fuzz,
    "hostile": _hostile,
    "crash": _crash,
    "store_faults": _store_faults,
    "concurrency": _concurrency,
    "load": _load,
    "security": _security,
    "browser_xss": lambda f: _browser(f),
    "defects": _defects,
    "round_three": _round_three,
}

INTRO = """# Reliability and security

What paretolens survives, measured by `tests/reliability/` (issue 7). Every figure below was
written by a run of that suite into `tests/reliability/.out/figures.json` (gitignored) and rendered
by `uv run python -m tests.reliability.render_doc`; the command under each heading reproduces it.
The suite runs in CI as the reliability tier of `scripts/test.sh` (bounded: fixed example
counts, enumerated crash boundaries, per-test timeouts, a 20-second load run).

Reproduce everything: `uv run pytest tests/reliability -q -m reliability -n 0 && uv run python -m tests.reliability.render_doc`
(`-m reliability -n 0`: a plain `pytest` runs only the fast tier, on two workers; `scripts/test.sh` runs every tier).
"""

NOT_TESTED = """## What is not yet tested

- **Power loss.** A commit is delta-rs writing its data files and then one log entry
  (create-if-absent); the tests kill processes (`kill -9` leaves the page cache intact) and
  inject errors, they do not cut power or drop unsynced writes (no dm-flakey / power-cut rig
  here). A disk that lies about flushes is not covered by any of this.
- **NFS-shared stores.** delta-rs commits on a local file system with a create-if-absent of the
  log entry; over NFS that depends on the server's exclusive create. Nothing here runs on NFS:
  share a store between machines on object storage (`s3://`, tested against moto's S3 server),
  not over NFS.
- **Real S3, GCS and Azure.** The S3 path is tested against an emulator, not AWS; GCS and Azure
  are delta-rs's own paths and untested here.
- **Other file systems and their limits:** the full-disk test uses tmpfs; quotas (EDQUOT, handled
  like ENOSPC), inode exhaustion and EIO from real hardware are covered only by the injected
  errors.
"""

FINDINGS = """## Bugs the suite found, and what changed

Fixed in `ingest/` (each has a hostile file or a test that failed before):

- `ingest/normalize.py` `_coerce`: a JSON `\\ud800` escape (a lone surrogate) in any string field
  crashed the whole batch in the store write (`UnicodeEncodeError`); now a reject of that field.
- `ingest/normalize.py` `_check_units` (new, called from `_check`): TPOT in milliseconds where
  seconds belong was stored silently; a row whose `<stat>_tpot x <stat>_intvty` is off by more than
  10x is now rejected as wrong units (real files agree within 0.1%).
- `ingest/sources/artifacts.py` `safe_extract`: encrypted members (`RuntimeError`), unsupported
  compression (`NotImplementedError`), corrupt deflate data (`zlib.error`), a UTF-8-flagged name
  that is not UTF-8 (`UnicodeDecodeError`), and a directory or file name the file system refuses
  or a file where a directory must go (`OSError` outside the try) all crashed the batch; they are
  now archive rejects. Also refused now: many members each just under the per-member bomb
  threshold (the archive's overall ratio is checked), and duplicate member names.
- `ingest/sources/artifacts.py` `_from_zip`: zips nested ~1,000 deep overflowed the stack
  (`RecursionError`); nesting is limited to `MAX_ZIP_DEPTH` = 8, and nested zips share one
  `MAX_ARCHIVE_BYTES` budget instead of each getting its own.
- `ingest/sources/artifacts.py` `collect`: file and directory names that are not UTF-8 crashed the store
  write; such files are reported ("file name is not valid UTF-8") and run names are shown with
  escapes.
- `ingest/readers/_metrics_common.py` `number`: an integer too large for a float raised
  `OverflowError` out of the aiperf unit reader (and the batch); now a `ParseError`.
- `ingest/readers/aiperf.py` `_load_json`, `vllm_capture.py` `_rates_check`, `vllm_command.py`
  `_value`/`spec_config`/`thinking_mode`, `auxiliary.py` `_first_json_line`: deeply nested or
  over-long JSON (`RecursionError`, `ValueError`) escaped; now handled like other invalid JSON.
- `ingest/pipeline.py` `_read_unit`: a unit reader's bug (any `ValueError`, `TypeError`, ...,
  `RecursionError`) sank the batch, where file readers' bugs were already rejects; and a unit
  reader's `ParseError` consumed every file of the directory, so good aggregates beside a broken
  aiperf export vanished unreported. Now only the file at fault is spent.
- `ingest/pipeline.py` `_store`: after an ingest was killed between storing a fixed file's rows and
  clearing its old reject, re-running never cleared it (the rows were duplicates); rejects of every
  file read successfully are now cleared.
- `ingest/store.py`: readers open a Parquet file by name more than once (footer, then data), so a
  concurrent writer's rename made reads fail ("File out of specification"); `points`,
  `timeseries`, `runs`, `rejects` retry, and `Store.collect(query, run_ids)` runs a lazy query the
  same way. `Store.lock` now sweeps temporary files a killed writer left behind.

- `ingest/store.py` (issue 26): the store is one Delta Lake table (`ingest/lake/`); the
  journal, the lock file and the read retries are gone. Every change is one commit, readers read
  one version, concurrent writers are refused by delta-rs and rebuild their change on the new
  version; caches key on the table version (issue 29 items 1, 9, 10).

Found outside `ingest/` and reported to their owners:

- `runner/service.py` `authorize`: with no `PARETOLENS_TOKEN` set and the server on loopback,
  launch and cancel needed no token, so any web page the user opened could submit a form to
  `http://127.0.0.1:8050/api/launch` (a request with `Origin: http://evil.example` launched a
  job). Fixed by the runner's owner (commit edc474b); now a test here.
- `dashboard/app.py` `create_app`: no request-body limit (Flask `MAX_CONTENT_LENGTH` unset,
  waitress accepts 1 GiB); a 20 MB form was read and parsed. Fixed (8 MiB, commit edc474b); now a
  test here.
- `dashboard/auth.py` `fetch_policy` was `auto` with `GITHUB_TOKEN` set, no `PARETOLENS_TOKEN`
  and a loopback host, so a cross-site form could make the server fetch a run into the store.
  Fixed: fetching from the web needs the app token like every other change; now a test here
  (`test_fetch_refuses_a_cross_site_form_with_no_token_configured`).
- `views/source.py` `DataSource._catalog` collected `store.scan_points()` lazily itself, so it
  failed transiently while an ingest renamed a run file (2 of 238 catalog reads during concurrent
  ingests, "File out of specification"). Fixed: it and `serve_cmds.sample_view` use
  `store.collect(...)`.
- Watch: the run page's controls callback (`dashboard/pages/run.py` `on_controls`, mostly
  `redraw` building the figures) is the load test's tightest margin. Under the 50 users its p95 CPU
  time was 96-123 ms (over issue 6's 100 ms) in runs at commit edc474b, and is within the target
  in the run above; the figure building alone is 40-55 ms for the 234-point run on an idle core.

Found from outside (issue 17: an attack and crash campaign) and fixed, each with a test in
`tests/reliability/test_defects.py` that failed before:

- `views/query/state.py` `_ids`: a run id with a space or brackets (the CLI's default id is the
  directory name) failed the URL model's id pattern, so `/` answered 400 for everyone and the run's
  page could not be opened. Now one rule in `ingest/store.py` (`check_run_id`, called by
  `ingest_paths` before anything is written, with a suggested id) and a tolerant one on read.
- `ingest/store.py` `replace_run_rows`: killed after the series rename, before the points
  rename, the re-ingest added the series again (every row twice, for good). The points written
  now replace any series stored under their ids.
- `ingest/store.py`, all writes (issue 17, deliver 2): an ingest wrote its runs' files one rename
  at a time (series, points, rejects twice, catalog per run), so a kill between two renames left
  a mix (a run's new points with the old catalog count and old rejects), and a full disk or a
  read-only store failed with a bare `OSError` part-way, also leaving a mix. Now everything a
  writer writes under `Store.lock()` is one transaction (`ingest/journal.py`, since replaced by
  the Delta store): files are staged
  and fsynced beside their targets, one journal rename commits them, the renames follow with
  directory fsyncs, and the next writer completes a committed change (readers read through it
  meanwhile); errors drop the staged files and raise `StoreWriteError` (the CLI prints it and
  exits 2). The on-disk layout is unchanged.
- `runner/service.py` `cancel_job` (without a live worker): finished points were marked cancelled
  and their results never ingested. It now applies the outcomes the executors wrote, ingests
  them, and cancels the rest.
- `analysis/tables.py` `csv_text` (the one CSV writer, behind `analysis/render.py`'s csv renderer:
  every `/export/<table>.csv` and every CLI `--format csv`): formula cells were written unchanged.
- `analysis/tables.py` `md_cell` and `analysis/comparison/compare.py` `comparison_markdown`: only `|` was
  escaped, so result-file text became live links on the compare page and in PR comments.
- `ingest/sources/artifacts.py` `_read_file`, `_walk`, `safe_extract`: `ingest /dev/zero` read without
  bound (the limit checked the reported size), a FIFO blocked ingest forever, and special files
  in a directory were skipped without a word.
- `dashboard/pages/jobs.py`, `pages/launch.py`, `pages/missing.py`, `dashboard/routes.py`:
  unhandled 500s (`KeyError` for an unknown point, `TypeError` for a non-string token, a polars
  regex-size error for a 1 MB search, Dash's `DependencyException` for `../` under
  `/_dash-component-suites`), each logging the request's text in full (about 1 MB a request).
- `dashboard/app.py`: any `Host` header was answered (DNS rebinding); no query or path limit.
- `ingest/normalize.py` `_check`/`_checks`: a 50 MB model string was stored.
- `dashboard/auth.py`: wrong tokens could be tried without a pause.

Found from outside (issue 29: round three of the attack run) and fixed, each with a test in
`tests/reliability/test_round_three.py` that failed before:

- `ingest/untrusted/yaml_load.py` (new): `load_yaml`, the one YAML loader, used by `ingest/defaults.py`,
  `ingest/readers/multiturn.py`, `ingest/readers/auxiliary.py`, `ingest/readers/guidellm.py`,
  `ingest/readers/inference_perf.py`, `runner/sources.py`,
  `analysis/cost.py`, `analysis/acceptance.py`, `dashboard/launching.py`, `views/master_configs.py`
  and `paretolens/commands/analysis_cmds.py`. A 1 KB alias bomb took 35 s and 3 GB, then a
  `MemoryError` that lost the batch.
- `ingest/untrusted/controls.py` (new): finding and escaping control characters. `paretolens/commands/common.py`
  `InertConsole` (both consoles; styles as `Text`), `analysis/render.py` (terminal table),
  `analysis/tables.py` `csv_text`/`md_text`: rich markup in file names crashed `ingest`
  (`MarkupError`) or was swallowed, and ESC/BEL/NUL reached the terminal and the exports.
- `ingest/normalize/rules.py`: identity strings with a control character are rejects (a NUL in a
  model string, `hostile/control_chars.json`, was stored). `analysis/sweep/export.py`: the snippet's
  comments escaped, the dispatch line `shlex.join`ed.
- `ingest/sources/files.py` `walk`: an unreadable directory was skipped without a word.
- `ingest/sources/artifacts.py`: the byte budget was per input (three zips took three times the limit),
  extracted files stayed on disk until the batch ended, and a run-tree probe's extraction was kept
  beside the second one; `ingest/sources/workspace.py` (new): a killed ingest's temporary directory was
  never removed. `ingest/sources/zips.py` `open_archive`/`Archive.read`: archives were unpacked whole
  to disk before a file was read; now the central directory is checked first and members are read
  into memory one at a time, each drawing on the batch budget, and only a nested zip is written
  (alone, removed before the next). Tests: `test_a_zip_bomb_and_a_zip_over_the_batch_budget_are_refused_and_the_good_files_ingested`,
  `test_extraction_holds_one_member_at_a_time_within_the_batch_budget`,
  `test_a_kill_during_extraction_leaves_nothing_after_the_next_start`.
- `views/cache.py` `file_version`, `views/baseline.py`: a 300-character run id raised
  "file name too long"; `views/exports.py`, `analysis/comparison/history.py`: history without arm or
  at; `dashboard/forged.py` (new), `dashboard/routes.py`: forged callback posts answered 500.
- `dashboard/auth.py` `foreign_origin`: another site's wrong tokens locked out the real user.
- `runner/worker.py` `_finish`, `runner/jobs.py` `final_state`, `runner/service.py` `cancel_job`:
  a cancel during the finish left the job "cancelled" and the catalog "success", and a job whose
  every point succeeded said cancelled.
- `dashboard/reject_list.py` (new), `dashboard/pages/run_tables.py`: every reject was drawn.
- `runner/locks.py` `hold(patience_s=...)`, `runner/jobs.py` `worker_lock`: a liveness look made a
  starting worker give up.

Not done here: the members a batch reads stay in memory until its units are parsed (the batch
budget bounds them at 2 GiB, plus loose files of at most 64 MiB each); parsing each unit as soon as
it is read needs the collection and the pipeline to stream units (retry deduplication and the
pairing of raw and aggregate artifacts look at every unit of a run first).

Limits that stay: wrong units are caught only where a file carries a second quantity to check
against (TPOT and interactivity together); `tpot_in_us_together.json` in the corpus is stored as
given. Atheris was not added: hypothesis already drives the same mutations through every reader,
and it would add a compiled dependency for no new coverage.
"""


def render(doc: dict[str, Any]) -> str:
    out = [INTRO]
    for key, (title, path) in SECTIONS.items():
        out.append(f"## {title}\n")
        out.append(f"Reproduce: {_cmd(path)}\n")
        sec = doc.get(key)
        if not sec:
            out.append("_Not run yet._\n")
            continue
        out.append(f"Last run: {_status(sec)}; {sec['machine']}.\n")
        out.extend(RENDER[key](sec["figures"]))
        out.append("")
    out.append(NOT_TESTED)
    out.append(FINDINGS)
    out.append(
        "## The corpus\n\n`tests/reliability/hostile/` is written by "
        "`uv run python -m tests.reliability.make_hostile` (deterministic; a test fails if the "
        "checked-in files differ). `MANIFEST.json` names each file's expected outcome.\n"
    )
    return "\n".join(out)


def main() -> int:
    try:
        doc = json.loads(FIGURES_PATH.read_text())
    except OSError:
        print(
            f"no figures at {FIGURES_PATH}: run `uv run pytest tests/reliability -q`",
            file=sys.stderr,
        )
        return 1
    DOC.write_text(render(doc))
    print(f"wrote {DOC}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
