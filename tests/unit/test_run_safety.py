"""A run that cannot be fooled: usage errors, repeated records, dry runs, unanswered LLM calls."""

from __future__ import annotations

import gc
import hashlib
import json
from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from tests.fakes import ScriptedChatModel
from tests.unit.test_cli_evaluate import _evaluate, _lines
from todeval.graphs import runner
from todeval.graphs.runner import ThreadNames, run_dialogue, thread_id_for
from todeval.nodes.context import Context, judging_fields
from todeval.nodes.judges.build import judges_build
from todeval.nodes.judges.limits import LLMPolicy, configure_llm
from todeval.nodes.judges.llm import LLMJudge

# -- usage errors: exit 2, one line ------------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--limit", "-1"], "argument --limit: expected 1 or more, got -1"),
        (["--limit", "x"], "argument --limit: expected a whole number"),
        (["--max-concurrency", "0"], "argument --max-concurrency: expected 1 or more"),
        (["--judge", "tau=abc"], "tau is a setting: put it in --config"),
        (["--llm-timeout", "0"], "argument --llm-timeout: expected a number above 0"),
        (["--budget", "1"], "--budget needs --prices"),
    ],
)
def test_usage_errors_exit_2_with_one_line(
    inputs: list[Path],
    config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    message: str,
) -> None:
    assert _evaluate(inputs, tmp_path / "run", config, *flags) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err
    assert not (tmp_path / "run" / "results.jsonl").exists()


def test_an_unwritable_out_is_a_usage_error(
    inputs: list[Path],
    config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert _evaluate(inputs, blocker / "run", config) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "a-file is not a folder" in err


def test_a_bad_threshold_in_the_config_is_a_usage_error(
    inputs: list[Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('[llm]\nmax_calls = "many"\n')
    assert _evaluate(inputs, tmp_path / "run", bad) == 2
    assert "[llm] max_calls: 'many' is not a valid max_calls" in capsys.readouterr().err


# -- the same record twice ---------------------------------------------------------------------


def test_a_record_repeated_across_inputs_is_scored_once_and_reported(
    inputs: list[Path],
    config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    dialogues = inputs[0]
    clash = tmp_path / "clash.jsonl"
    first = json.loads(dialogues.read_text().splitlines()[0])
    first["turns"][0]["user_msg"] = "Something else entirely."
    clash.write_text(json.dumps(first) + "\n")
    out = tmp_path / "run"
    assert _evaluate([dialogues, dialogues, clash], out, config, "--suite", "gsr") == 0
    ids = [line["record_id"] for line in _lines(out)]
    assert sorted(ids) == ["d1", "d2"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["duplicate_records"]["count"] == 2
    assert sorted(summary["duplicate_records"]["ids"]) == ["d1", "d2"]
    clashes = [s for s in summary["skipped"] if s.get("dialogue_id") == "d1"]
    assert clashes and clashes[0]["field"] == "id"
    assert "repeated an earlier one exactly" in capsys.readouterr().out
    assert not (out / "results.jsonl.partial").exists()


# -- a dry run ---------------------------------------------------------------------------------


def test_a_dry_run_counts_the_calls_and_sends_none(
    inputs: list[Path],
    config: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a dry run needs no key
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai:gpt-4o-mini": [1.0, 2.0]}))
    out = tmp_path / "run"
    code = _evaluate(
        inputs[:1], out, config, "--suite", "gsr", "--dry-run", "--prices", str(prices),
        "--judge", "turn_quality=openai:gpt-4o-mini,local:turn",
    )  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    # Two readable dialogues, one Appendix D call each (the broken record has no call).
    [row] = [line.split() for line in text.splitlines() if line.strip().startswith("turn_quality")]
    assert row[1] == "2" and int(row[2]) > 100
    assert "prompt cost: $" in text
    assert not out.exists()


# -- a thread's identity and unanswered calls --------------------------------------------------


def test_call_settings_do_not_change_a_records_thread() -> None:
    class Record(BaseModel):
        dialogue_id: str

    record, context = Record(dialogue_id="d1"), Context()
    same = context.updated(llm={"max_calls": 3, "timeout_s": 2.0, "dry_run": True})
    assert thread_id_for("x", record, same) == thread_id_for("x", record, context)
    assert thread_id_for(
        "x", record, context.updated(settings={"goal_tracking": {"tau": 0.5}})
    ) != thread_id_for("x", record, context)


def test_a_thread_id_hashes_the_record_the_settings_and_the_build_as_before() -> None:
    """Naming a run's threads once gives the ids earlier releases wrote (their checkpoints)."""

    class Record(BaseModel):
        dialogue_id: str
        text: str
        scores: dict[str, float]

    context = Context().updated(settings={"goal_tracking": {"tau": 0.5}})
    names = ThreadNames.of("x", context)
    for record in (
        Record(dialogue_id="d1", text='caf\u00e9 "quoted"', scores={"b": 1.0, "a": 0.5}),
        Record(dialogue_id="d2", text="", scores={}),
    ):
        payload = json.dumps(
            [record.model_dump(mode="json"), judging_fields(context), judges_build()],
            sort_keys=True,
            default=str,
        )
        digest = hashlib.sha256(payload.encode()).hexdigest()[:16]
        assert names.thread_id(record) == f"x:{record.dialogue_id}:{digest}"
        assert thread_id_for("x", record, context) == names.thread_id(record)


def test_a_graph_input_reuses_the_dump_that_named_its_thread_once() -> None:
    class Record(BaseModel):
        dialogue_id: str
        scores: dict[str, float]

    names = ThreadNames.of("x", Context())
    record = Record(dialogue_id="d1", scores={"b": 1.0, "a": 0.5})
    other = Record(dialogue_id="d2", scores={})
    names.thread_id(record)
    dumped = runner.record_json(record)
    assert dumped == record.model_dump(mode="json")
    again = runner.record_json(record)  # handed out once: a graph may change its input
    assert again == dumped and again is not dumped
    names.thread_id(record)
    assert runner.record_json(other) == other.model_dump(mode="json")  # not the last named
    assert runner.record_json(record) is not dumped


def test_records_run_with_fewer_collections_and_the_old_thresholds_come_back(
    inputs: list[Path], config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[int, int, int]] = []
    real = runner.run_dialogue

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(runner, "run_dialogue", spy)
    before = gc.get_threshold()
    assert _evaluate(inputs, tmp_path / "run", config) == 0
    assert seen and set(seen) == {runner.BATCH_GC_THRESHOLD}
    assert gc.get_threshold() == before != runner.BATCH_GC_THRESHOLD


def test_the_thresholds_come_back_after_an_error() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), runner.batch_collection():
        assert gc.get_threshold() == runner.BATCH_GC_THRESHOLD
        raise RuntimeError("a record failed")
    assert gc.get_threshold() == before


class _Verdict(BaseModel):
    label: str


class _State(TypedDict, total=False):
    dialogue_id: str
    label: str | None
    reason: str | None


class _Record(BaseModel):
    dialogue_id: str


def _graph(judge: LLMJudge[_Verdict]) -> Any:
    def ask(state: _State) -> _State:
        result = judge.invoke({"text": state["dialogue_id"]})
        return {"label": result.value.label if result.value else None, "reason": result.reason}

    builder: StateGraph[_State, Context, _State, _State] = StateGraph(_State, Context)
    builder.add_node("ask", ask)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", END)
    return builder.compile(checkpointer=InMemorySaver())


def _run(graph: Any) -> Any:
    return run_dialogue(
        graph,
        _Record(dialogue_id="d1"),
        subsystem="test",
        context=Context(),
        make_input=lambda r: {"dialogue_id": r.dialogue_id},
        output_keys=["label", "reason"],
    )


def test_a_thread_with_an_unanswered_call_is_asked_again_next_run() -> None:
    configure_llm(LLMPolicy())
    model = ScriptedChatModel([ConnectionError("refused"), '{"label": "yes"}'])
    judge = LLMJudge(
        role="test", spec="openai:fake", prompt="{text}", output_model=_Verdict,
        chat_model=model, cache=None, max_retries=0, backoff_s=0,
    )  # fmt: skip
    graph = _graph(judge)
    first = _run(graph)
    assert first.output["label"] is None and "refused" in first.output["reason"]
    assert first.unanswered and "test: model call failed" in first.unanswered[0]
    second = _run(graph)
    assert not second.resumed and second.output["label"] == "yes" and not second.unanswered
    third = _run(graph)  # answered: now the finished thread is read back, no call
    assert third.resumed and third.output["label"] == "yes" and len(model.calls) == 2


class _Killed(BaseException):
    """The process dying at that line (not an error the runner may catch)."""


def _failing_judge(model: ScriptedChatModel) -> LLMJudge[_Verdict]:
    return LLMJudge(
        role="test", spec="openai:fake", prompt="{text}", output_model=_Verdict,
        chat_model=model, cache=None, max_retries=0, backoff_s=0,
    )  # fmt: skip


def test_a_kill_between_the_last_checkpoint_and_the_drop_still_asks_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    configure_llm(LLMPolicy())
    model = ScriptedChatModel([ConnectionError("refused"), '{"label": "yes"}'])
    graph = _graph(_failing_judge(model))
    with monkeypatch.context() as patch:

        def killed(self: Any, thread_id: str) -> None:
            raise _Killed

        patch.setattr(InMemorySaver, "delete_thread", killed)
        with pytest.raises(_Killed):  # the final checkpoint is written, the drop never happens
            _run(graph)
    again = _run(graph)  # the kept thread is known by its own checkpoint: asked again
    assert not again.resumed and again.output["label"] == "yes" and not again.unanswered
    assert len(model.calls) == 2
    third = _run(graph)
    assert third.resumed and third.output["label"] == "yes" and len(model.calls) == 2


def test_unanswered_calls_survive_a_kill_in_the_middle_of_a_synced_thread() -> None:
    """durability="sync": killed after a step with a failed call, the resumed rest is clean."""
    configure_llm(LLMPolicy())
    model = ScriptedChatModel([ConnectionError("refused"), '{"label": "yes"}'])
    judge = _failing_judge(model)
    alive = [False]

    def ask(state: _State) -> _State:
        result = judge.invoke({"text": state["dialogue_id"]})
        return {"label": result.value.label if result.value else None, "reason": result.reason}

    def then(state: _State) -> _State:
        if not alive[0]:
            raise _Killed
        return {}

    builder: StateGraph[_State, Context, _State, _State] = StateGraph(_State, Context)
    builder.add_node("ask", ask)
    builder.add_node("then", then)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "then")
    builder.add_edge("then", END)
    graph = builder.compile(checkpointer=InMemorySaver())

    def run() -> Any:
        return run_dialogue(
            graph,
            _Record(dialogue_id="d1"),
            subsystem="test",
            context=Context(),
            make_input=lambda r: {"dialogue_id": r.dialogue_id},
            output_keys=["label", "reason"],
            durability="sync",
        )

    with pytest.raises(_Killed):
        run()
    alive[0] = True
    resumed = run()  # from the checkpoint after "ask": its failed call is still counted
    assert resumed.output["label"] is None and len(model.calls) == 1
    assert resumed.unanswered and "test: model call failed" in resumed.unanswered[0]
    asked = run()  # and the thread was dropped, so the call is made again
    assert asked.output["label"] == "yes" and not asked.unanswered and len(model.calls) == 2


def test_a_call_budget_refuses_calls_and_says_so() -> None:
    configure_llm(LLMPolicy(max_calls=1))
    try:
        model = ScriptedChatModel(['{"label": "a"}', '{"label": "b"}'])
        judge = LLMJudge(
            role="test", spec="openai:fake", prompt="{text}", output_model=_Verdict,
            chat_model=model, cache=None, max_retries=0, backoff_s=0,
        )  # fmt: skip
        assert judge.invoke({"text": "one"}).value == _Verdict(label="a")
        refused = judge.invoke({"text": "two"})
        assert refused.value is None and "call budget reached (1 calls)" in str(refused.reason)
        assert len(model.calls) == 1
    finally:
        configure_llm(LLMPolicy())
