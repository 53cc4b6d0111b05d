"""ProactiveEval synthesis: the graph's stages, checkpoints and resume; the corpus; the CLI.

Also the judge-side scoring graphs over a finished plan and transcript.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.memory import InMemorySaver

from tests.fakes import ScriptedChatModel
from todeval.evals.datasets.proactive import load_proactive
from todeval.evals.datasets.proactive_labels import load_guidance_dialogues, only_records
from todeval.evals.proactive_schema import TIERS, ProactiveItem, SynthesisSeed
from todeval.graphs.corpus.proactive import run_seed, synthesis_seeds, synthesize_proactive
from todeval.graphs.proactive import (
    build_synthesis_graph,
    guidance_scoring_graph,
    plan_scoring_graph,
)
from todeval.nodes.context import Context
from todeval.nodes.judges import llm as llm_module
from todeval.nodes.judges.result import JudgeResult
from todeval.nodes.proactive.judges.synthesis_writer.local import LocalSynthesisWriter
from todeval.nodes.prompts import proactive as prompts
from todeval.stores.llm_cache import LLMCache
from todeval.stores.paths import PROJECT_ROOT

SAMPLE = PROJECT_ROOT / "data" / "samples" / "proactive"
STAGES = ["choose_topic", "generate_environment", "generate_targets", "ensemble_targets"]


def test_local_synthesis_runs_every_stage_and_yields_a_loadable_item() -> None:
    graph = build_synthesis_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "t1"}}
    out = graph.invoke({"seed_id": "x-1", "domain": "recommendation", "seed": 3}, config)
    assert out["accepted"] is True and out["tier"] in TIERS
    item = ProactiveItem.model_validate(out["item"] | {"domain": "recommendation", "tier": "x"})
    assert item.eval_id == "x-1" and 2 <= len(item.sub_target) <= 4
    assert out["topic_path"][0] == "recommendation" and out["topic"] == item.topic
    # Each stage has its own checkpoint (a resumed thread skips the finished ones).
    history = list(graph.get_state_history(config))
    stages = {name for snapshot in history for name in snapshot.next}
    assert set(STAGES) | {"check_difficulty", "check_reference", "assign_tier"} <= stages
    assert len(history) >= len(STAGES) + 2 * out["rounds"] + 4
    log = out["difficulty_log"]
    assert [e["round"] for e in log] == list(range(out["rounds"] + 1))
    assert all(len(e["predictions"]) == 3 for e in log)


def test_a_failed_stage_resumes_there_without_redoing_earlier_stages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: Counter[str] = Counter()
    real_environment, real_ensemble = (
        LocalSynthesisWriter.environment,
        LocalSynthesisWriter.ensemble,
    )

    def environment(self: LocalSynthesisWriter, *args: Any) -> Any:
        calls["environment"] += 1
        return real_environment(self, *args)

    def broken(self: LocalSynthesisWriter, *args: Any) -> Any:
        calls["ensemble"] += 1
        return JudgeResult(None, "local", "model call failed: timed out")

    monkeypatch.setattr(LocalSynthesisWriter, "environment", environment)
    monkeypatch.setattr(LocalSynthesisWriter, "ensemble", broken)
    graph = build_synthesis_graph().compile(checkpointer=InMemorySaver())
    seed = SynthesisSeed(eval_id="r-1", domain="system_operation", seed=5)
    first = run_seed(graph, seed, Context())
    assert first.output is None and first.error and "target ensemble" in first.error

    monkeypatch.setattr(LocalSynthesisWriter, "ensemble", real_ensemble)
    second = run_seed(graph, seed, Context())
    assert second.output is not None and second.output["accepted"] is True
    assert calls == {"environment": 1, "ensemble": 1}  # no stage before the failed one re-ran
    third = run_seed(graph, seed, Context())
    assert third.resumed and third.output == second.output


def test_corpus_writes_the_release_layout_and_a_rerun_reads_it_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    checkpoints = str(tmp_path / "checkpoints.sqlite")
    summary = synthesize_proactive(6, 2, Context(), out=tmp_path / "run", checkpoints=checkpoints)
    loaded = list(load_proactive(tmp_path / "run"))
    assert all(isinstance(x, ProactiveItem) for x in loaded)
    assert len(loaded) == summary["counts"]["kept"] > 0
    assert {x.domain for x in loaded} <= {s.domain for s in synthesis_seeds(6, 2)}
    assert sum(summary["by_tier"].values()) == len(loaded)
    lines = (tmp_path / "run" / "synthesis.jsonl").read_text().splitlines()
    assert len(lines) == 6 and all(json.loads(line)["difficulty_log"] for line in lines)
    assert (tmp_path / "run" / "report.html").exists()

    def no_writing(*args: Any) -> Any:
        raise AssertionError("a finished thread was run again")

    monkeypatch.setattr(LocalSynthesisWriter, "environment", no_writing)
    again = synthesize_proactive(6, 2, Context(), out=tmp_path / "run2", checkpoints=checkpoints)
    assert again["counts"] == summary["counts"]
    assert (tmp_path / "run2" / "synthesis.jsonl").read_text().splitlines() == lines


def _reply(matches: list[bool]) -> Any:
    """Answer each Listing by recognising its prompt (a scripted stand-in for an LLM)."""

    def answer(messages: Sequence[BaseMessage]) -> str:
        text = str(messages[-1].content)
        plan = {
            "Target": "Recommend Lantern Keepers for game night",
            "sub-target": ["Ask about game night", "Suggest Lantern Keepers"],
        }
        if "sub-topics for the parent topic" in text:
            return '{"parent_topic": "p", "topics": ["Board games", "Podcasts"]}'
        if "generating realistic scenarios" in text:
            env = {
                "user_information": "Hosts game night.",
                "trigger_factor": "Plays Lantern Keepers.",
            }
            return json.dumps(env)
        if "dialogue expert who is good at proactive" in text:
            merged = {"Target": plan["Target"], "sub_target": plan["sub-target"]}
            return json.dumps({"analyze_process": "merged"} | merged)
        if "Your task is to generate target and sub_target" in text:
            # The prediction follows the environment, so each round's matcher prompt differs.
            environment = text.split("<Environment>")[-1]
            return json.dumps(plan | {"Target": f"{plan['Target']} {len(environment)}"})
        if "predicted targets:" in text:
            return json.dumps({"matches": [matches.pop(0)]})
        if "Input: " in text and "Output: " in text:  # Listings 6-9: the input, with more
            original = text.rsplit("Input: ", 1)[-1].split("\nTarget:")[0].strip()
            return json.dumps({"output": f"Output: At 19:00 a bell rang. {original}"})
        if "**best target**" in text:
            return '{"reason": "fits", "judge": "True"}'
        raise AssertionError(f"unexpected prompt: {text[:80]}")

    return answer


def test_llm_roles_run_the_papers_listings_through_refinement(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    model = ScriptedChatModel(fallback=_reply([True, True, False]))
    monkeypatch.setattr(llm_module, "default_llm_cache", lambda: LLMCache(tmp_path / "c.sqlite"))
    monkeypatch.setattr(llm_module, "load_chat_model", lambda spec, **kw: model)
    spec = "openai:synthesis-test"
    context = Context(
        judges={
            "synthesis_writer": spec,
            "target_prediction": [spec],
            "difficulty": spec,
            "final_check": [spec],
        }
    )
    graph = build_synthesis_graph().compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": "llm"}}
    out = graph.invoke(
        {"seed_id": "l-1", "domain": "recommendation", "seed": 1}, config, context=context
    )
    # Generation: hit -> obfuscation: hit -> noise: miss -> final check -> Hard.
    assert [e["after"] for e in out["difficulty_log"]] == ["generation", "obfuscation", "noise"]
    assert out["rounds"] == 2 and out["tier"] == "hard" and out["accepted"]
    sent = [str(call[-1].content) for call in model.calls]
    candidates = [t for t in sent if t.startswith(prompts.TARGET_GENERATION_PROMPT.split("{")[0])]
    assert len(candidates) == 5 + 3  # five samples (never cached), one prediction per round
    for listing in (
        prompts.TOPIC_TREE_PROMPT,
        prompts.ENVIRONMENT_PROMPT,
        prompts.TARGET_ENSEMBLE_PROMPT,
        prompts.OBFUSCATE_USER_INFORMATION_PROMPT,
        prompts.OBFUSCATE_TRIGGER_FACTOR_PROMPT,
        prompts.NOISE_USER_INFORMATION_PROMPT,
        prompts.NOISE_TRIGGER_FACTOR_PROMPT,
        prompts.FINAL_CHECK_PROMPT,
    ):
        head = listing.split("{")[0]  # the verbatim text up to its first field
        assert any(t.startswith(head) for t in sent), head
    assert out["item"]["environment"]["trigger_factor"].startswith("At 19:00 a bell rang.")


def test_cli_synthesize_proactive_writes_a_loadable_dataset(tmp_path: Path) -> None:
    from todeval.cli.main import main

    out = tmp_path / "syn"
    domains = "persuasion,long-term_follow_up"
    code = main(["synthesize", "proactive", "--n", "4", "--seed", "9", "--out", str(out),
                 "--checkpoints", ":memory:", "--domains", domains])  # fmt: skip
    assert code == 0
    items = [x for x in load_proactive(out / "dataset") if isinstance(x, ProactiveItem)]
    assert items and {x.domain for x in items} <= {"persuasion", "long_term_follow_up"}
    bad = main(["synthesize", "proactive", "--n", "1", "--out", str(out), "--writer", "local:x"])
    assert bad == 2


def test_scoring_graphs_judge_a_finished_plan_and_transcript() -> None:
    items = {x.eval_id: x for x in load_proactive(SAMPLE) if isinstance(x, ProactiveItem)}
    dialogue = only_records(
        load_guidance_dialogues(SAMPLE / "labelled" / "guidance_dialogues.jsonl")
    )[0]
    item = items[dialogue.environment_id]
    scored = guidance_scoring_graph.invoke(
        {
            "eval_id": dialogue.eval_id,
            "environment": item.environment.model_dump(),
            "reference": item.reference.model_dump(),
            "messages": [m.model_dump() for m in dialogue.messages],
        }
    )
    assert scored["guidance_verdict"]["judge"] == "local"
    assert scored["guidance_verdict"]["overall"] is not None
    agent_turns = sum(m.role == "assistant" for m in dialogue.messages)
    assert len(scored["density"]["counts"]) == agent_turns
    plan = plan_scoring_graph.invoke(
        {
            "eval_id": "p",
            "domain": item.domain,
            "environment": item.environment.model_dump(),
            "reference": item.reference.model_dump(),
            "plan": item.reference.model_dump(),
        }
    )
    assert plan["plan_verdict"]["score"] >= 8  # the reference itself
    assert isinstance(plan["plan_verdict"]["sub_scores"], dict)
