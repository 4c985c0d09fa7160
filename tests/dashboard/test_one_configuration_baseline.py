"""Issue 23, item 1: `baseline=<dump run>` under a raw run of the same configuration.

The store of tests/analysis/test_one_configuration.py: the InferenceX app dump fixture and the
raw `vllm bench serve` files of its Kimi-K2.5 MI355X TP8 MTP 8k/1k points (conc 32 and 64). The
baseline is the same measurements, so the run page's uplift is 0.0 % and the arm has a baseline.
"""

from __future__ import annotations

import pytest

from tests.analysis.test_one_configuration import DUMP_RUN, RAW_RUN, two_sources
from views.query.state import RunView
from views.source import DataSource


def test_a_dump_run_is_the_baseline_of_the_raw_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    source = DataSource(two_sources(tmp_path_factory.mktemp("one-config-page")))
    view, notes = RunView.parse(f"unofficialRun={RAW_RUN}&baseline={DUMP_RUN}")
    assert notes == []
    data = source.run_data(view)
    assert data.baseline is not None and data.baseline.notes == ()
    (row,) = data.baseline.table(data.names).to_dicts()
    assert (row["matched_concs"], row["uplift_pct"], row["mean_delta_pct"]) == (2, 0.0, 0.0)
    md = data.baseline.markdown
    assert "| TP8 EP1 \\| MTP \\| kv none | 3.31–4.34 | +0.0% | +0.0% | 0.0 |" in md
    # only the dump run's GLM-4.7 gaudi3 arm, which the raw run does not measure, is unmatched
    assert "Only in candidate" not in md
    assert md.split("**Only in base:**")[1] == "\n- TP8 EP1 | no spec | kv none (conc 16, 32)\n"
