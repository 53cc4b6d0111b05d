"""Goal success as a LangSmith experiment, run offline on the bundled sample: same as the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from todeval.cli.main import main
from todeval.evals.datasets import load_dialogues, split_records
from todeval.evals.record_views import dialogue_record
from todeval.graphs.experiments import evaluation_experiment
from todeval.nodes.context import Context

pytestmark = pytest.mark.integration

SAMPLE = Path(__file__).resolve().parents[2] / "data" / "samples" / "enterprise_dialogues.jsonl"


@pytest.mark.filterwarnings("ignore::langsmith._internal._beta_decorator.LangSmithBetaWarning")
def test_experiment_scores_match_the_cli(tmp_path: Path, no_network: list[object]) -> None:
    dialogues, errors = split_records(load_dialogues(SAMPLE))
    assert not errors
    records = [dialogue_record(dialogue) for dialogue in dialogues]
    results = evaluation_experiment(
        records, context=Context(), suites=["goal_success"], upload_results=False
    )
    rows = list(results)
    assert len(rows) == len(dialogues)
    for row in rows:
        keys = {r.key for r in row["evaluation_results"]["results"]}
        assert keys == {
            "gsr",
            "turn_quality_accuracy",
            "rcof_accuracy",
            "rcof_coverage",
            "segmentation_f1",
        }
    summary_scores = {r.key: r.score for r in results._summary_results["results"]}
    assert not no_network  # nothing left the machine

    # The same corpus through `todeval goal-success` (escalation off, as in an experiment).
    out = tmp_path / "cli"
    assert (
        main(
            ["goal-success", str(SAMPLE), "--no-escalation", "--checkpoints", ":memory:"]
            + ["--out", str(out)]
        )
        == 0
    )
    summary = json.loads((out / "summary.json").read_text())
    assert summary_scores["gsr_corpus"] == pytest.approx(summary["gsr"], abs=1e-4)
    assert summary_scores["gold_gsr"] == pytest.approx(37 / 78, abs=1e-4)  # sample README
