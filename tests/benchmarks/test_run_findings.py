"""`python -m benchmarks.run --findings`: the findings part of a RESULTS file replaced, the
measured figures around it kept as they are."""

from __future__ import annotations

from pathlib import Path

from benchmarks.run import with_findings

RESULTS = """# paretolens performance results

## Machine

- CPU: 2 cores

## Summary

| figure | result |
|---|---|
| first point | 388 ms |

## Targets not met, and why

old text

## An older finding

more old text

## Ingest after the format work (a finding whose heading begins like a suite's)

still old text

## Frontier and verdicts (full mode: 1,000,000 points, 10,000 arms)

#### a figure

- median 0.98 s

## Dashboard in headless chromium

- 388 ms
"""


def test_the_findings_part_is_replaced_and_the_figures_kept() -> None:
    new = "## Targets not met, and why\n\nnew text\n\n## A new finding\n\nnumbers\n"
    out = with_findings(RESULTS, new)
    head, tail = (
        RESULTS.split("## Targets not met")[0],
        RESULTS.split("## Frontier and verdicts")[1],
    )
    assert out == head + new + "\n## Frontier and verdicts" + tail
    assert "old text" not in out and out.count("## Summary") == 1 and "Ingest after" not in out
    assert with_findings(out, new) == out  # idempotent


def test_the_repository_results_take_the_current_findings() -> None:
    here = Path(__file__).resolve().parents[2] / "benchmarks"
    results, findings = (here / "RESULTS.md").read_text(), (here / "findings.md").read_text()
    out = with_findings(results, findings)
    assert findings.rstrip() in out
    # every measured section is still there, word for word
    suites = results[results.index("\n## Frontier and verdicts") :]
    assert out.endswith(suites)
    assert out.split("## Summary")[0] == results.split("## Summary")[0]
