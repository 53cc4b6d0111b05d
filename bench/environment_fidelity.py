"""Benchmark: tool-environment fidelity on the recorded banking run, and retail trial costs.

Fidelity: every recorded tool call of the 40 conversations of
``simulations/banking_gpt-4.1_run40.json`` is replayed, in order, through a fresh banking
environment of its task, and each result is compared with the recorded one (JSON parsed,
compared structurally, plus the error flag). Two databases:

- **as the run had it**: the shared ``db.toml`` less the four payees (``payee_101``,
  ``payee_303``, ``payee_401``, ``payee_505``) added to it after the run (the run's customer
  records list no payee for those customers; AgentChangeBench's ``db.toml`` at
  calissaman/AgentChangeBench@8ba63329 has none either). This measures the tools.
- **as shipped**: ``db.toml`` itself, which todeval simulates with; the extra differences are
  those customers' ``payee_ids``.

Every difference is printed with its reason; :data:`KNOWN_DIFFERENCES` is the documented list
(``tests/unit/test_environment_fidelity.py`` fails on any other). Then the retail figures: the
one-off parse of ``db.json``, what a trial costs (construction, a write, the snapshot, a
reset) against a deep copy of the database, the gold database of every retail task, and
determinism (the same log twice gives the same snapshot). Figures only, not a test.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from bench.internals import (
    BankingEnvironment,
    Database,
    FidelityReport,
    RetailEnvironment,
    ToolCall,
    ToolDifference,
    as_json,
    data_dir,
    gold_actions,
    gold_snapshot,
    load_banking_db,
    pristine_db,
    replay_recorded_run,
    retail_db_path,
)

RUN = data_dir() / "agentchangebench" / "simulations" / "banking_gpt-4.1_run40.json"
RETAIL_TASKS = data_dir() / "agentchangebench" / "domains" / "retail" / "tasks.json"

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


@lru_cache(maxsize=1)
def load_run() -> dict[str, Any]:
    """The recorded run (tasks and simulations)."""
    run: dict[str, Any] = json.loads(RUN.read_text(encoding="utf-8"))
    return run


def run40_database() -> Database:
    """The banking database as the recorded run had it (see the module doc)."""
    db = load_banking_db()
    db["payees"] = [p for p in db["payees"] if p["payee_id"] not in PAYEES_ADDED_AFTER_RUN]
    for customer in db["customers"]:
        kept = [p for p in customer["payee_ids"] if p not in PAYEES_ADDED_AFTER_RUN]
        customer["payee_ids"] = kept
    return db


def fidelity(db: Database | None = None) -> FidelityReport:
    """Replay the run through banking environments on ``db`` (default: db.toml as shipped)."""
    run = load_run()
    tasks = {str(t["id"]): t for t in run["tasks"]}
    return replay_recorded_run(
        run["simulations"], tasks, lambda task: BankingEnvironment(task, db=db)
    )


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


def print_fidelity(label: str, report: FidelityReport) -> None:
    """The share, then every difference with its reason."""
    print(f"\n== banking fidelity, database {label}")
    print(f"  {report.identical}/{report.calls} results identical ({report.share:.1%})")
    for diff in report.differences:
        reason = reason_for(diff) or "UNEXPLAINED"
        print(f"  - {diff.task_id} {diff.call_id} {diff.name}({json.dumps(diff.arguments)})")
        print(f"      recorded: {diff.recorded[:110]}")
        print(f"      todeval:  {diff.produced[:110]}")
        print(f"      reason:   {reason}: {REASONS.get(reason, '')}")


def timed(action: Callable[[], Any], repeat: int = 200) -> float:
    """Mean seconds per call of ``action``."""
    started = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - started) / repeat


def retail_figures() -> None:
    """What a retail trial costs, gold databases, determinism."""
    print("\n== retail trial cost")
    pristine_db.cache_clear()
    started = time.perf_counter()
    base = pristine_db()
    print(
        f"  parse db.json ({retail_db_path().stat().st_size / 1e6:.1f} MB) once per process: "
        f"{(time.perf_counter() - started) * 1e3:.0f} ms"
    )
    print(
        f"  deep copy of the database (what a trial does NOT do): "
        f"{timed(lambda: copy.deepcopy(base), 3) * 1e3:.0f} ms"
    )
    print(f"  new trial: {timed(RetailEnvironment) * 1e6:.1f} us")
    order_id = next(o for o, r in base["orders"].items() if r["status"] == "pending")
    write = ToolCall(id="w", name="modify_pending_order_address", arguments={
        "order_id": order_id, "address1": "1 Main St", "address2": "", "city": "Austin",
        "state": "TX", "country": "USA", "zip": "78701"})  # fmt: skip
    env = RetailEnvironment()

    def first_write() -> None:
        env.reset()
        env.call(write)

    print(f"  first write to an order (copies that order): {timed(first_write) * 1e6:.1f} us")
    env.call(write)
    changed = sum(len(t) for t in env.changes().values())
    total = sum(len(t) for t in base.values())
    print(f"  records copied after the write: {changed} of {total}")
    print(f"  snapshot: {timed(env.snapshot) * 1e6:.0f} us; reset: {timed(env.reset) * 1e6:.1f} us")
    tasks = json.loads(RETAIL_TASKS.read_text(encoding="utf-8"))
    with_gold = [t for t in tasks if gold_actions(t)]
    started = time.perf_counter()
    for task in with_gold:
        gold_snapshot("retail", task)
    per = (time.perf_counter() - started) / len(with_gold)
    print(f"  gold database of {len(with_gold)}/{len(tasks)} tasks: {per * 1e3:.2f} ms per task")
    log = [c for t in with_gold for c in gold_actions(t)]
    first, second = RetailEnvironment(), RetailEnvironment()
    first.replay(log)
    second.replay(log)
    same = json.dumps(first.snapshot(), sort_keys=True) == json.dumps(
        second.snapshot(), sort_keys=True
    )
    print(f"  determinism: {len(log)} gold calls replayed twice -> identical snapshot: {same}")


def main() -> None:
    """Fidelity on both databases, then the retail figures."""
    if not RUN.exists() or not Path(retail_db_path()).exists():
        print(f"{RUN} or {retail_db_path()} not found: set TODEVAL_DATA_DIR")
        return
    print_fidelity("as the run had it", fidelity(run40_database()))
    print_fidelity("as shipped (db.toml)", fidelity())
    retail_figures()


if __name__ == "__main__":
    main()
