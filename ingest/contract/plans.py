"""The plan contract between the analysis that prunes a sweep and the runner that launches the
next one: one kept arm with its identity and the loads to run.

Part of the data contract (`ingest.contract.schema` re-exports it), so the runner needs nothing of
`analysis` to read a plan.
"""

from __future__ import annotations

from dataclasses import dataclass

# A configuration's identity fields as (column, value) pairs, in a stable order.
Identity = tuple[tuple[str, object], ...]


@dataclass(frozen=True)
class ArmPlan:
    """One kept arm: where it goes in the master config and which concurrencies to run."""

    config_key: str
    scenario: str
    isl: int | None
    osl: int | None
    arm_id: str
    arm_label: str
    identity: Identity
    conc_list: tuple[int, ...]
    # Request rates (req/s) of the kept points of a request-rate sweep (conc_list is then empty).
    rate_list: tuple[float, ...] = ()
