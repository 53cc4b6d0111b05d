"""Subsystems register themselves once; the evaluation, the CLI and the report loop over that."""

from __future__ import annotations

import importlib

from todeval.cli.main import build_parser
from todeval.evals.metrics.suite_tally import TallySettings
from todeval.evals.subsystems import (
    SUBSYSTEMS,
    SUITES,
    counted_suites,
    start_tallies,
    subsystem,
    suite_named,
)
from todeval.graphs.evaluation import build_evaluation_graph, suite_node
from todeval.graphs.suites import EvaluationSuite, evaluation_suite, evaluation_suites


def test_every_registry_line_resolves_to_its_suite_and_command() -> None:
    for registered in SUBSYSTEMS:
        suite = evaluation_suite(registered.name)
        assert isinstance(suite, EvaluationSuite)
        assert hasattr(importlib.import_module(registered.command), "add_parser")
    assert list(evaluation_suites()) == list(SUITES)


def test_the_evaluation_graph_has_one_branch_per_registered_subsystem() -> None:
    nodes = set(build_evaluation_graph().nodes)
    assert nodes == {"plan_suites", "run_local_suites", *(suite_node(s) for s in SUITES)}


def test_the_cli_has_each_subsystems_command() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    assert {"goal-success", "goal-tracking", "goal-shift", "memory", "proactive"} <= set(commands)


def test_aliases_and_counts_come_from_the_registry() -> None:
    assert suite_named("gsr") == "goal_success" and suite_named("goals") == "goal_tracking"
    assert suite_named("no_such_suite") is None
    assert subsystem("proactive").own_kind == "proactive"
    assert counted_suites(SUITES, ["sgd"]) == [s for s in SUITES if s != "proactive"]
    assert counted_suites(SUITES, ["sgd", "proactive"]) == list(SUITES)


def test_a_run_starts_one_tally_per_subsystem_in_report_order() -> None:
    tallies = start_tallies(TallySettings())
    assert list(tallies) == list(SUITES)
    assert all(tally.count == 0 for tally in tallies.values())
