"""GuideLLM, inference-perf and llmperf sniffing: each claims its own real files and no file or
directory of any other fixture, and no other reader claims theirs."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from ingest.errors import ParseError
from ingest.readers.base import FileReader, SourceFile, UnitReader
from ingest.readers.guidellm import GuideLLMReader
from ingest.readers.inference_perf import InferencePerfReader
from ingest.readers.llmperf import LlmperfRunReader, LlmperfSummaryReader
from ingest.readers.registry import file_readers, unit_readers
from ingest.reading import parse_json
from tests.ingest.readers._support import FIXTURES

OURS = {"guidellm", "inference_perf", "llmperf"}
FILE_SNIFFERS: dict[str, FileReader] = {
    "guidellm": GuideLLMReader(),
    "llmperf": LlmperfSummaryReader(),
}
UNIT_SNIFFERS: dict[str, UnitReader] = {
    "inference_perf": InferencePerfReader(),
    "llmperf": LlmperfRunReader(),
}


def _format_of(path: Path) -> str | None:
    parts = path.relative_to(FIXTURES).parts
    return parts[1] if parts[0] == "wild" and len(parts) > 2 else None


def _files() -> list[tuple[SourceFile, Any]]:
    out = []
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        rel = str(path.relative_to(FIXTURES))
        src = SourceFile(path, rel, path.parent.name, path.read_bytes())
        try:
            doc = parse_json(src)
        except ParseError:
            doc = None
        out.append((src, doc))
    return out


FILES = _files()
DIRS: dict[Path, list[SourceFile]] = defaultdict(list)
for _src, _ in FILES:
    DIRS[_src.path.parent].append(_src)


@pytest.mark.parametrize("name", sorted(FILE_SNIFFERS))
def test_a_file_sniffer_claims_no_file_of_another_format(name: str) -> None:
    reader = FILE_SNIFFERS[name]
    claimed = [s.rel for s, d in FILES if _format_of(s.path) != name and reader.sniff(s, d)]
    assert claimed == []
    own = [
        s.rel
        for s, d in FILES
        if _format_of(s.path) == name and s.name.endswith((".json", ".yaml"))
    ]
    mine = [s.rel for s, d in FILES if _format_of(s.path) == name and reader.sniff(s, d)]
    if name == "guidellm":
        assert mine == own
    else:  # llmperf's summaries; responses files go to its unit reader, paired
        assert mine and set(mine) <= set(own)


@pytest.mark.parametrize("name", sorted(UNIT_SNIFFERS))
def test_a_unit_sniffer_claims_no_directory_of_another_format(name: str) -> None:
    reader = UNIT_SNIFFERS[name]
    claimed = [
        str(d)
        for d, files in DIRS.items()
        if _format_of(files[0].path) != name and reader.sniff_unit(files)
    ]
    assert claimed == []


def test_no_other_reader_claims_a_harness_file() -> None:
    for src, doc in FILES:
        fmt = _format_of(src.path)
        if fmt not in OURS or src.name == "PROVENANCE.md":
            continue
        names = [r.name for r in file_readers() if r.sniff(src, doc)]
        if fmt == "inference_perf":
            assert names == [], src.rel  # stage reports are read as a directory only
        else:
            assert names == [fmt], src.rel


def test_the_unit_readers_claim_exactly_the_harness_directories() -> None:
    claims = {
        str(d.relative_to(FIXTURES / "wild")): [r.name for r in unit_readers() if r.sniff_unit(f)]
        for d, f in DIRS.items()
        if _format_of(f[0].path) in OURS and d.name not in OURS
    }
    assert claims == {
        "guidellm/jhurlocker_guidellm-pipeline_c925e31": [],
        "guidellm/llm-d_llm-d-benchmark_d4c7822": [],
        "guidellm/rsevilla87_guidellm-results-parser_d6d6945": [],
        "guidellm/vllm-project_guidellm_a1fe883": [],
        "inference_perf/kubecon-na-2025_vllm": ["inference_perf"],
        "inference_perf/kubecon-na-2025_vllm+eagle": ["inference_perf"],
        "llmperf/llmperf-leaderboard_raw_data_summary": [],  # summaries alone: file reader
        **{
            f"llmperf/gpt-4.1-nano_20260120_165625/{c}": ["llmperf"]
            for c in (1, 10, 20, 30, 40, 50)
        },
    }
