"""Banking's recorded run and the documented differences of its replay (the fidelity bench).

Every recorded tool call of the 40 conversations of ``simulations/banking_gpt-4.1_run40.json``
is replayed through a fresh banking environment of its task (see
:mod:`~nodes.simulation.environments.fidelity`), on two databases:

- **as the run had it**: the shared ``db.toml`` less the four payees (``payee_101``,
  ``payee_303``, ``payee_401``, ``payee_505``) added to it after the run (the run's customer
  records list no payee for those customers; AgentChangeBench's ``db.toml`` at
  calissaman/AgentChangeBench@8ba63329 has none either). This measures the tools.
- **as shipped**: ``db.toml`` itself, which todeval simulates with; the extra differences are
  those customers' ``payee_ids``.

:data:`KNOWN_DIFFERENCES` lists each difference on the run's own database with its reason;
``tests/unit/test_environment_fidelity.py`` fails on any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from todeval.nodes.simulation.domains.banking.data_model import Database, load_banking_db
from todeval.nodes.simulation.domains.banking.tools import BankingEnvironment
from todeval.nodes.simulation.domains.base import RecordedRun
from todeval.nodes.simulation.environments.fidelity import ToolDifference, as_json

RUN40 = "agentchangebench/simulations/banking_gpt-4.1_run40.json"
"""The recorded run, relative to ``$TODEVAL_DATA_DIR``."""

#: Payees in the shared db.toml that the recorded run's database did not have.
PAYEES_ADDED_AFTER_RUN = ("payee_101", "payee_303", "payee_401", "payee_505")

REASONS: dict[str, str] = {
    "file_dispute_upstream_bug": (
        "upstream file_dispute always failed with 'Error: DISPUTED' (its TransactionStatus enum "
        "has no DISPUTED member); todeval files the dispute"
    ),
    "file_dispute_twice": (
        "second dispute of the same transaction: upstream failed with 'Error: DISPUTED' as "
        "always; todeval refuses because the first call already filed it"
    ),
    "time_filter_upstream_bug": (
        "upstream get_transactions compared the start_time/end_time text with date-times and "
        "failed (TypeError) on any account with transactions; todeval parses the filter and "
        "returns the matching transactions"
    ),
    "db_revision": (
        "db.toml as shipped links payee_101/303/401/505 to their customers; the run's database "
        "had no such payees (customer payee_ids differ)"
    ),
}

#: Each known difference on the run's own database: recorded call id -> reason.
KNOWN_DIFFERENCES: dict[str, str] = {
    "call_JZppHRrgeM3WfWzlgcpGGwiw": "file_dispute_upstream_bug",  # task 4, tx_303
    "call_Wo0EJD4u2lrV4MD4GrLIqUdL": "time_filter_upstream_bug",  # task 4, 'T' separator
    "call_rBN7QwkmR1nM6dQpW5SzPfvH": "time_filter_upstream_bug",  # task 4, ' ' separator
    "call_vdqarvlRwLjQMUVVIGn1GUxG": "file_dispute_upstream_bug",  # task 7, tx_101
    "call_waDjOjjL0qhxT2j5zZMpfyHk": "file_dispute_upstream_bug",  # task 10, tx_303
    "call_q5zUzCLI8l8rG0xz6AfBUEuY": "file_dispute_twice",  # task 10, retry
}


def run40_database() -> Database:
    """The banking database as the recorded run had it (see the module doc)."""
    db = load_banking_db()
    db["payees"] = [p for p in db["payees"] if p["payee_id"] not in PAYEES_ADDED_AFTER_RUN]
    for customer in db["customers"]:
        kept = [p for p in customer["payee_ids"] if p not in PAYEES_ADDED_AFTER_RUN]
        customer["payee_ids"] = kept
    return db


def reason_for(difference: ToolDifference) -> str | None:
    """The documented reason for a difference, or None when it is not a known one."""
    if difference.call_id in KNOWN_DIFFERENCES:
        return KNOWN_DIFFERENCES[difference.call_id]
    recorded, produced = as_json(difference.recorded), as_json(difference.produced)
    if difference.name.startswith("get_customer_by") and _only_payees_differ(recorded, produced):
        return "db_revision"
    return None


def _only_payees_differ(recorded: Any, produced: Any) -> bool:
    # One customer or a one-element list of them, equal once payee_ids are set aside.
    if isinstance(recorded, list) and isinstance(produced, list) and len(recorded) == 1:
        recorded, produced = recorded[0], produced[0] if produced else None
    if not isinstance(recorded, dict) or not isinstance(produced, dict):
        return False
    strip = {k: v for k, v in recorded.items() if k != "payee_ids"}
    return strip == {k: v for k, v in produced.items() if k != "payee_ids"}


def _on_run40_database(task: Mapping[str, Any]) -> BankingEnvironment:
    return BankingEnvironment(task, db=run40_database())


RECORDED_RUNS = (
    RecordedRun(
        path=RUN40, label="as the run had it", environment=_on_run40_database, explain=reason_for
    ),
    RecordedRun(path=RUN40, label="as shipped (db.toml)", explain=reason_for),
)
"""The run on both databases (see the module doc)."""
