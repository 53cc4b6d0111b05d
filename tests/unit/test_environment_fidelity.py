"""Environment fidelity: the recorded banking run replays through todeval's banking tools.

Floors sit a little under what the environment reaches (258/264 = 97.7 % on the run's own
database, 230/264 = 87.1 % on db.toml as shipped); every difference must be a documented one
(:mod:`nodes.simulation.domains.banking.fidelity`), so a regression in any tool fails here.
"""

from __future__ import annotations

import pytest

from bench.environment_fidelity import fidelity
from todeval.nodes.simulation.domains import DOMAINS
from todeval.nodes.simulation.domains.banking.fidelity import KNOWN_DIFFERENCES, REASONS

BANKING = DOMAINS["banking"]
ON_ITS_OWN_DATABASE, AS_SHIPPED = BANKING.recorded_runs

pytestmark = pytest.mark.skipif(
    not AS_SHIPPED.file().exists(), reason="run40 not found (set TODEVAL_DATA_DIR)"
)


def test_the_run_replays_on_its_own_database() -> None:
    report = fidelity(BANKING, ON_ITS_OWN_DATABASE)
    assert report.calls == 264
    assert report.share >= 0.97
    unexplained = [d for d in report.differences if d.call_id not in KNOWN_DIFFERENCES]
    assert unexplained == []
    assert {KNOWN_DIFFERENCES[d.call_id] for d in report.differences} <= set(REASONS)


def test_the_shipped_database_differs_only_by_its_later_payees() -> None:
    report = fidelity(BANKING, AS_SHIPPED)
    assert report.share >= 0.86
    reasons = [AS_SHIPPED.explain(d) for d in report.differences]
    assert None not in reasons
    extra = [d for d, r in zip(report.differences, reasons, strict=True) if r == "db_revision"]
    assert extra and all(d.name.startswith("get_customer_by") for d in extra)
