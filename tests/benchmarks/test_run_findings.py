"""`python -m benchmarks.run --findings`: the findings part of a RESULTS file replaced, the
measured figures around it kept as they are; `--only S --into RESULTS.md`: suite S's section and
summary rows replaced, the rest kept."""

from __future__ import annotations

from pathlib import Path

from benchmarks.report import Figure, Section
from benchmarks.run import with_findings, with_sections
from benchmarks.timing import Samples

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


SUITES_RESULTS = """# paretolens performance results

## Summary

| figure | result | target | status | ratio to the named anchor |
|---|---|---|---|---|
| a frontier figure | 1.0 s | t | PASS |  |
| page: interactive | 2151 ms | t | INFO |  |
| page: gone | 9 ms | t | INFO |  |
| a load figure | 48 ms | t | PASS |  |

## Targets not met, and why

text

## Frontier and verdicts (full mode: 1,000,000 points, 10,000 arms)

frontier figures

## Interactive first: hover, fully interactive, analysis at real sizes

old interactive figures

## Dashboard under 50 users (load)

load figures
"""


def test_a_suite_run_replaces_only_its_section_and_rows() -> None:
    title = "Interactive first: hover, fully interactive, analysis at real sizes"
    sec = Section(title, notes=["new note"])
    sec.figures = [
        Figure("page: interactive", Samples([1.5, 1.5, 1.5]), "t"),
        Figure("page: new", Samples([0.25, 0.25, 0.25]), "t"),
    ]
    out = with_sections(SUITES_RESULTS, [sec])
    summary = [line for line in out.splitlines() if line.startswith("| ")][1:]
    assert summary == [
        "| a frontier figure | 1.0 s | t | PASS |  |",
        "| page: interactive | 1500 ms | t | INFO |  |",
        "| page: new | 250 ms | t | INFO |  |",
        "| page: gone | 9 ms | t | INFO |  |",
        "| a load figure | 48 ms | t | PASS |  |",
    ]
    assert "old interactive figures" not in out and "new note" in out
    for kept in ("frontier figures", "load figures", "## Targets not met, and why\n\ntext"):
        assert kept in out
    assert out.index("new note") < out.index("## Dashboard under 50 users")
    assert with_sections(out, [sec]) == out  # idempotent


def test_a_figure_the_suite_no_longer_makes_loses_its_summary_row() -> None:
    title = "Interactive first: hover, fully interactive, analysis at real sizes"
    old = SUITES_RESULTS.replace(
        "old interactive figures",
        "#### page: interactive — **INFO**\n\n- 2151 ms\n\n#### page: gone — **INFO**\n\n- 9 ms",
    )
    sec = Section(title)
    sec.figures = [Figure("page: interactive", Samples([1.5, 1.5, 1.5]), "t")]
    out = with_sections(old, [sec])
    summary = [line for line in out.splitlines() if line.startswith("| ")][1:]
    assert summary == [
        "| a frontier figure | 1.0 s | t | PASS |  |",
        "| page: interactive | 1500 ms | t | INFO |  |",
        "| a load figure | 48 ms | t | PASS |  |",
    ]
    assert "page: gone" not in out
