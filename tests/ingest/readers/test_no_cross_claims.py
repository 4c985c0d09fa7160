"""No harness claims another's file: every sniff rule in the registry, against every fixture.

Generic over `ingest.readers.registry`: a reader added to the registry is covered without a
change here. Each real file under tests/fixtures has an owner, the first reader in pipeline order
(unit readers, then file readers) whose sniff claims it. No other reader's sniff may claim it,
except

- the declared fallbacks (`FALLBACKS`: readers that sit last and only name side files), and
- pairs of readers of one and the same format (`SAME_FORMAT`, each with the reason).

Unit readers are asked about each file alone (`sniff_unit([file])`), as a directory holding only
that file would be.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ingest.errors import ParseError
from ingest.readers.base import SourceFile
from ingest.readers.registry import file_readers, unit_readers
from ingest.reading import parse_json

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"

# Readers that are not a harness's format: they name the files that travel with results.
FALLBACKS = frozenset({"auxiliary"})

# (owner, other): both read the same format, so the other claiming the owner's file is expected.
SAME_FORMAT: dict[tuple[str, str], str] = {
    (
        "vllm_bench_sweep",
        "bench_serving_ms",
    ): "a `vllm bench sweep serve` run=N.json is a `vllm bench serve` result; the sweep reader "
    "reads it with its directory's SERVE/BENCH parameters",
}


@dataclass(frozen=True)
class Claim:
    """Which readers claim one fixture file, in pipeline order."""

    rel: str
    readers: tuple[str, ...]


def _fixture_files() -> Iterator[SourceFile]:
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and path.suffix != ".zip":
            rel = str(path.relative_to(FIXTURES))
            yield SourceFile(path, rel, path.parent.name, path.read_bytes())


def _doc(src: SourceFile) -> Any:
    try:
        return parse_json(src)
    except ParseError:
        return None  # broken JSON: the file readers see no document


def _claimers(src: SourceFile) -> tuple[str, ...]:
    """The readers whose sniff claims `src`, unit readers first (a sniffer that raises is
    "not mine", as in the pipeline)."""
    doc = _doc(src)
    names: list[str] = []
    for unit in unit_readers():
        try:
            if unit.sniff_unit([src]):
                names.append(unit.name)
        except Exception:
            pass
    for reader in file_readers():
        try:
            if reader.sniff(src, doc):
                names.append(reader.name)
        except Exception:
            pass
    return tuple(dict.fromkeys(names))


def _claims() -> list[Claim]:
    return [Claim(src.rel, _claimers(src)) for src in _fixture_files()]


CLAIMS = _claims()
READERS = sorted({r.name for r in unit_readers()} | {r.name for r in file_readers()})


def _violations(reader: str, claims: list[Claim]) -> list[str]:
    """The files of other formats `reader` claims."""
    return [
        f"{c.rel} (owner {c.readers[0]})"
        for c in claims
        if reader in c.readers[1:]
        and reader not in FALLBACKS
        and (c.readers[0], reader) not in SAME_FORMAT
    ]


@pytest.mark.parametrize("reader", READERS)
def test_no_reader_claims_a_file_of_another_format(reader: str) -> None:
    wrong = _violations(reader, CLAIMS)
    assert wrong == [], f"{reader} also claims files of other formats: {wrong}"


def test_every_new_harness_owns_its_real_outputs() -> None:
    owners = {c.rel: c.readers[0] if c.readers else None for c in CLAIMS}
    expected = {
        "wild/trtllm_bench/result_1024_1024_3000.txt": "trtllm_bench",
        "wild/trtllm_bench/in128_out40_bs1.json": "trtllm_bench",
        "wild/genai_bench/qwen3-30b-a3b_training_job/experiment_metadata.json": "genai_bench",
        "wild/genai_bench/gpt-oss-120b_trtllm/"
        "D8000_700_text-to-text_openai_gpt-oss-120b_num_concurrency_4_time_66s.json": "genai_bench",
        "wild/bench_console/sglang_cookbook_qwen3/Qwen3.md": "vllm_capture",
        "wild/mlperf_loadgen/mlperf_log_summary.txt": "mlperf_loadgen",
        "wild/mlperf_loadgen/mlperf_log_detail.txt": "mlperf_loadgen",
        "wild/aiperf_failed/all_requests_timed_out/profile_export_aiperf.json": "aiperf",
        # a SGLang bench_serving JSONL is SGLang's, not vLLM's benchmark_serving reader's
        "wild/sglang_bench_serving/datacrunch_h200_deepseek_dp_mla.jsonl": "sglang_bench_serving",
    }
    assert {rel: owners[rel] for rel in expected} == expected


def test_the_check_catches_a_reader_that_claims_every_json_object() -> None:
    # A sniff that says yes to every JSON object, registered last: it owns nothing and claims
    # the files of every JSON format.
    greedy = [
        Claim(c.rel, (*c.readers, "greedy"))
        if isinstance(
            _doc(SourceFile(FIXTURES / c.rel, c.rel, "", (FIXTURES / c.rel).read_bytes())), dict
        )
        else c
        for c in CLAIMS
    ]
    wrong = _violations("greedy", greedy)
    assert any("(owner trtllm_bench)" in w for w in wrong)
    assert any("(owner together_runner)" in w for w in wrong)
