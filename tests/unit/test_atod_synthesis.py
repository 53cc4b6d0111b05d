"""ATOD synthesis (paper 000, §4): the graph end to end with the local roles, the set, the CLI.

The runs draw from SGD dev (smaller than train, the paper's seed corpus) so they stay quick.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from todeval.evals.datasets.atod import load_atod
from todeval.evals.datasets.goal_tracking import load_goal_tracking_records
from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.goal_tracking.synthesis_checks import (
    classify,
    dialogue_profile,
    quality_problems,
)
from todeval.graphs.corpus.goal_tracking_synthesis import synthesis_plans, synthesize_atod
from todeval.graphs.goal_tracking import build_atod_synthesis_graph
from todeval.nodes.context import Context
from todeval.nodes.goal_tracking.synthesis.pipeline import reject, route_after_check, route_stage
from todeval.nodes.goal_tracking.synthesis.sampling import strata
from todeval.stores.paths import data_dir

SOURCE = data_dir() / "sgd" / "sgd_dev.jsonl.gz"


def _synthesize(out: Path, *, n: int = 6, seed: int = 5, **kwargs: Any) -> dict[str, Any]:
    return synthesize_atod(n, seed=seed, out=out, source=SOURCE, checkpoints=":memory:", **kwargs)


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("atod") / "set"
    return out, _synthesize(out)


def test_a_seed_draws_the_same_set_and_another_seed_another(
    synthesized: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    out, _ = synthesized
    again = tmp_path / "again"
    _synthesize(again)
    assert (again / "dialogues.jsonl").read_bytes() == (out / "dialogues.jsonl").read_bytes()
    other = tmp_path / "other"
    _synthesize(other, seed=6)
    ours = [d["turns"] for d in _lines(out / "dialogues.jsonl")]
    theirs = [d["turns"] for d in _lines(other / "dialogues.jsonl")]
    assert ours != theirs


def test_the_set_loads_with_the_atod_loader_and_track_goals_reader(
    synthesized: tuple[Path, dict[str, Any]],
) -> None:
    out, summary = synthesized
    path = out / "dialogues.jsonl"
    loaded = list(load_atod(path))
    assert loaded and all(isinstance(d, AtodDialogue) for d in loaded)
    auto = list(load_goal_tracking_records(path, "auto", None))
    assert [d.dialogue_id for d in auto if isinstance(d, AtodDialogue)] == [
        d.dialogue_id for d in loaded if isinstance(d, AtodDialogue)
    ]
    for dialogue in loaded:
        assert isinstance(dialogue, AtodDialogue)
        assert dialogue.complexity_class in ("medium", "complex")
        ids = {goal.id for goal in dialogue.goal_list}
        assert all(set(turn.all_goals) == ids for turn in dialogue.turns)
        assert [turn.turn_id for turn in dialogue.turns] == list(range(1, len(dialogue.turns) + 1))
        assert quality_problems(dialogue.model_dump(mode="json")) == []
        # parent_id names a goal it depends on (a sub-goal of its prerequisite), or is None
        for goal in dialogue.goal_list:
            parent = (goal.model_extra or {}).get("parent_id")
            assert parent is None or parent in goal.dependencies
    assert sum(summary["counts"]["accepted"].values()) == len(loaded)


def test_the_summary_compares_the_graph_with_tables_7_and_8(
    synthesized: tuple[Path, dict[str, Any]],
) -> None:
    out, summary = synthesized
    assert json.loads((out / "summary.json").read_text())["counts"] == summary["counts"]
    rows = {row["statistic"]: row for row in summary["co_occurrence"]["versus_paper"]}
    assert rows["nodes"]["paper"] == 52 and rows["edges"]["paper"] == 396
    graph = summary["co_occurrence"]["statistics"]["graph"]
    assert rows["edges"]["ours"] == graph["edges"]
    nodes, edges = graph["nodes"], graph["edges"]
    assert graph["density"] == pytest.approx(2 * edges / (nodes * (nodes - 1)), abs=1e-3)
    assert graph["mean_degree"] == pytest.approx(2 * edges / nodes, abs=0.01)
    assert "rejections" in summary and "quality_checks" in summary["rejections"]


def test_the_complexity_split_follows_the_share_and_table_9(
    synthesized: tuple[Path, dict[str, Any]],
) -> None:
    out, summary = synthesized
    assert summary["counts"]["asked"] == {"complex": 2, "medium": 4}  # round(6 * 0.35) = 2
    for record in _lines(out / "dialogues.jsonl"):
        dialogue = AtodDialogue.model_validate(record)
        profile = dialogue_profile(dialogue)
        assert classify(profile)[0] == dialogue.complexity_class
        if dialogue.complexity_class == "complex":
            assert profile["goals"] >= 7 and profile["turns"] >= 30 and profile["defects"]
        else:
            assert 2 <= profile["goals"] <= 8 and 8 <= profile["turns"] <= 35
    assert strata(20, 0.5, 1).count("complex") == 10
    assert strata(20, 0.0, 1) == ["medium"] * 20
    plans = synthesis_plans(20, 3, 0.35)
    assert sum(p.complexity_class == "complex" for p in plans) == 7
    assert len({p.dialogue_id for p in plans}) == 20
    with pytest.raises(ValueError):
        strata(3, 1.5, 0)


def _good(synthesized: tuple[Path, dict[str, Any]], kind: str) -> dict[str, Any]:
    out, _ = synthesized
    return next(d for d in _lines(out / "dialogues.jsonl") if d["complexity_class"] == kind)


def test_quality_checks_reject_broken_dialogues(
    synthesized: tuple[Path, dict[str, Any]],
) -> None:
    good = _good(synthesized, "complex")
    assert quality_problems(good) == []

    missing = copy.deepcopy(good)
    del missing["goal_list"][0]["intent"]
    assert any(p.startswith("schema") for p in quality_problems(missing))

    backwards = copy.deepcopy(good)  # a completed goal reopens: not a valid transition
    turn = next(t for t in backwards["turns"] if any(
        c["new_status"] == "completed" for c in t["goal_status_changes"]))  # fmt: skip
    done = next(c["goal_id"] for c in turn["goal_status_changes"] if c["new_status"] == "completed")
    last = backwards["turns"][-1]
    last["goal_status_changes"].append({"goal_id": done, "new_status": "open"})
    last["all_goals"][done] = "open"
    assert any(p.startswith("transition") for p in quality_problems(backwards))

    unfollowed = copy.deepcopy(good)  # all_goals that do not follow from the changes
    unfollowed["turns"][0]["all_goals"] = {
        g: "completed" for g in unfollowed["turns"][0]["all_goals"]
    }
    assert any(p.startswith("statuses") for p in quality_problems(unfollowed))

    cycle = copy.deepcopy(good)
    first, second = cycle["goal_list"][0], cycle["goal_list"][1]
    first["dependencies"], second["dependencies"] = [second["id"]], [first["id"]]
    assert any(p.startswith("dependency") for p in quality_problems(cycle))

    relabelled = copy.deepcopy(_good(synthesized, "medium"))
    relabelled["complexity_class"] = "complex"
    assert any(p.startswith("class") for p in quality_problems(relabelled))


def test_a_rejected_attempt_is_recorded_and_samples_again() -> None:
    state: dict[str, Any] = {
        "dialogue_id": "x", "seed": 1, "complexity_class": "medium", "attempt": 0,
        "rejections": [], "failure": {"stage": "quality", "reason": "statuses: broken"},
        "record": {"turns": []},
    }  # fmt: skip
    assert route_stage(state) == "reject" and route_after_check(state) == "reject"
    update = reject(state)  # type: ignore[arg-type]
    assert update["attempt"] == 1 and update["record"] is None and update["failure"] is None
    assert update["rejections"] == [
        {"attempt": 0, "stage": "quality", "reason": "statuses: broken"}
    ]


def test_the_graph_gives_up_after_its_attempts_with_every_rejection() -> None:
    graph = build_atod_synthesis_graph().compile(checkpointer=InMemorySaver())
    context = Context(
        settings={"goal_tracking": {"synthesis_source": str(SOURCE), "synthesis_attempts": 2}}
    )
    config: Any = {"configurable": {"thread_id": "unknown-class"}}
    out = graph.invoke(
        {"dialogue_id": "u", "seed": 1, "complexity_class": "trivial"}, config, context=context
    )
    assert out["dialogue"] is None
    assert [r["stage"] for r in out["rejections"]] == ["sampling", "sampling"]
    assert "unknown complexity class" in out["rejections"][0]["reason"]


def test_a_checkpointed_rerun_reads_the_threads_back(tmp_path: Path) -> None:
    checkpoints = str(tmp_path / "c.sqlite")
    first = synthesize_atod(2, seed=8, out=tmp_path / "a", source=SOURCE, checkpoints=checkpoints)
    second = synthesize_atod(2, seed=8, out=tmp_path / "b", source=SOURCE, checkpoints=checkpoints)
    assert (tmp_path / "a" / "dialogues.jsonl").read_bytes() == (
        tmp_path / "b" / "dialogues.jsonl"
    ).read_bytes()
    assert first["counts"] == second["counts"]


def test_cli_synthesize_atod_writes_a_set_track_goals_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from todeval.cli.main import main

    out = tmp_path / "syn"
    code = main(["synthesize", "atod", "--n", "3", "--seed", "4", "--out", str(out),
                 "--source", str(SOURCE), "--checkpoints", ":memory:"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    assert "table 8 edges" in printed and "paper 396" in printed
    assert f"wrote {out / 'dialogues.jsonl'}" in printed
    dialogues = list(load_atod(out / "dialogues.jsonl"))
    assert len(dialogues) == 3
    summary = json.loads((out / "summary.json").read_text())
    assert summary["run"]["seed"] == 4
    bad = main(["synthesize", "atod", "--n", "1", "--out", str(out), "--complex-share", "2"])
    assert bad == 2
    wrong = main(["synthesize", "atod", "--n", "1", "--out", str(out), "--generator", "local:x"])
    assert wrong == 2


@pytest.mark.slow
def test_track_goals_finds_the_sets_schema_and_reports_by_complexity_class(
    synthesized: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    from todeval.cli.main import main

    out, summary = synthesized
    run = tmp_path / "tracked"
    code = main(["track-goals", str(out / "dialogues.jsonl"), "--out", str(run),
                 "--vector-backend", "memory", "--checkpoints", ":memory:"])  # fmt: skip
    assert code == 0
    tracked = json.loads((run / "summary.json").read_text())
    assert tracked["run"]["context"]["schema_path"].endswith("schema_dev.json")
    assert tracked["gold_not_comparable"] == 0 and tracked["goal_detection_f1"] is not None
    classes = tracked["by_complexity_class"]
    assert set(classes) == {"medium", "complex"}
    assert {k: v["n_dialogues"] for k, v in classes.items()} == summary["counts"]["accepted"]
    assert all(v["goal_detection_f1"] is not None for v in classes.values())
    html = (run / "report.html").read_text()
    assert "complex dialogues: count / detection F1" in html and "medium dialogues" in html


def _llm_synthesis_reply(messages: list[Any]) -> str:
    """Answers the three synthesis prompts the way an LLM would (see the test below)."""
    from todeval.nodes.prompts.goal_tracking import (
        DIALOGUE_GENERATION_PROMPT,
        STATUS_ANNOTATION_PROMPT,
        TRAJECTORY_ANNOTATION_PROMPT,
    )

    text = next(str(m.content) for m in messages if m.type == "human")
    if text.startswith(TRAJECTORY_ANNOTATION_PROMPT.split("{")[0]):
        sampled = re.findall(r"^- (\S+) / (\S+):", text, re.MULTILINE)[:2]  # drops the rest
        goals = [
            {"id": f"x{k}", "domain": service, "intent": intent, "content": f"{intent} please"}
            for k, (service, intent) in enumerate(sampled)
        ] + [{"id": "x9", "domain": "Invented_1", "intent": "Nope"}]  # not sampled: dropped
        metadata = {"async_execution": False, "interleaving": False, "proactivity": False,
                    "estimated_turns": 8}  # fmt: skip
        return json.dumps({"complexity_class": "medium", "metadata": metadata, "goals": goals})
    if text.startswith(DIALOGUE_GENERATION_PROMPT.split("{")[0]):
        turns = [{"speaker": "USER" if k % 2 == 0 else "SYSTEM", "utterance": f"line {k + 1}"}
                 for k in range(8)]  # fmt: skip
        return "<think>drafting</think>" + json.dumps({"turns": turns})
    assert text.startswith(STATUS_ANNOTATION_PROMPT.split("{")[0]), text[:80]
    turn = int(re.search(r"Current turn (\d+)", text).group(1))  # type: ignore[union-attr]
    changes = {1: [("g1", "open")], 4: [("g1", "completed")], 5: [("g2", "open")],
               8: [("g2", "completed")]}.get(turn, [])  # fmt: skip
    return json.dumps(
        {"goal_status_changes": [{"goal_id": g, "new_status": s} for g, s in changes]}
    )


def test_llm_roles_annotate_write_and_label_a_dialogue(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from tests.fakes import ScriptedChatModel
    from todeval.nodes.goal_tracking.roles import (
        DIALOGUE_GENERATION,
        STATUS_ANNOTATION,
        TRAJECTORY_ANNOTATION,
    )
    from todeval.nodes.judges import llm as llm_module
    from todeval.stores.llm_cache import LLMCache

    for role in (TRAJECTORY_ANNOTATION, DIALOGUE_GENERATION, STATUS_ANNOTATION):
        role.cache_clear()
    model = ScriptedChatModel(fallback=_llm_synthesis_reply)
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    spec = "openai:synthesis-test"
    context = Context(
        judges={
            "trajectory_annotation": spec,
            "dialogue_generation": spec,
            "status_annotation": spec,
        },
        settings={"goal_tracking": {"synthesis_source": str(SOURCE)}},
    )
    graph = build_atod_synthesis_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "llm"}}
    out = graph.invoke(
        {"dialogue_id": "l", "seed": 3, "complexity_class": "medium"}, config, context=context
    )
    for role in (TRAJECTORY_ANNOTATION, DIALOGUE_GENERATION, STATUS_ANNOTATION):
        role.cache_clear()  # they hold this test's model
    dialogue = out["dialogue"]
    assert dialogue is not None, out["rejections"]
    assert [g["id"] for g in dialogue["goal_list"]] == ["g1", "g2"]  # renumbered, x9 dropped
    assert all(g["classification_method"] == "model_based" for g in dialogue["goal_list"])
    assert dialogue["turns"][3]["all_goals"] == {"g1": "completed", "g2": "not_mentioned"}
    assert dialogue["metadata"]["judges"]["status_annotation"] == spec
    assert len(model.calls) == 1 + 1 + 8  # annotation, generation, one label call per turn
    assert quality_problems(dialogue) == []


def test_the_synthesis_roles_declare_their_variants_and_answer_lengths() -> None:
    from tests.fakes import ScriptedChatModel
    from todeval.nodes.goal_tracking.judges.status_annotation import LocalStatusAnnotator
    from todeval.nodes.goal_tracking.roles import (
        DIALOGUE_GENERATION,
        STATUS_ANNOTATION,
        TRAJECTORY_ANNOTATION,
    )
    from todeval.nodes.judges import local_variants

    for role in (TRAJECTORY_ANNOTATION, DIALOGUE_GENERATION, STATUS_ANNOTATION):
        assert local_variants(role.name) == ["default"]
    assert isinstance(STATUS_ANNOTATION.judge("local"), LocalStatusAnnotator)
    model = ScriptedChatModel([])
    lengths = [
        role.llm_judge("openai:x", chat_model=model, cache=None).llm.max_output_tokens
        for role in (TRAJECTORY_ANNOTATION, DIALOGUE_GENERATION, STATUS_ANNOTATION)
    ]
    assert lengths == [2048, 8192, 1024]  # a whole dialogue is a long answer


def test_an_llm_dialogue_s_proactive_actions_are_read_off_its_labels() -> None:
    from todeval.nodes.goal_tracking.synthesis.pipeline import labelled_actions

    def turn(k: int, speaker: str, *changes: tuple[str, str]) -> dict[str, Any]:
        labels = [{"goal_id": g, "new_status": s} for g, s in changes]
        return {
            "turn_id": k,
            "speaker": speaker,
            "utterance": f"u{k}",
            "goal_status_changes": labels,
        }

    turns = [
        turn(1, "USER", ("g1", "open")),
        turn(2, "SYSTEM", ("g1", "pending")),  # answers the user: not proactive
        turn(3, "USER", ("g2", "open")),
        turn(4, "SYSTEM", ("g1", "completed")),  # while the user is on g2: an async update
    ]
    actions = labelled_actions([{"id": "g1"}, {"id": "g2"}], turns)
    assert actions == [{"turn_id": 4, "goal_id": "g1", "kind": "update", "appropriate": None}]
