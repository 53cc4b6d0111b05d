"""Benchmark: every LLM judge role against a real local model (``make bench``).

Starts SmolLM2-135M-Instruct behind llama.cpp's OpenAI-compatible server
(:func:`scripts.llm_server.running_llm_server`, ``n_ctx`` 2048) and prints, never asserts:

1. **Per role**, over the first ``--inputs`` inputs of the role's probe (the inputs and the one
   question per input of ``tests/integration/test_llm_roles.py``): the share of schema-valid
   answers (a value, every item labelled), model calls (attempts, retries included), prompt and
   completion tokens and seconds per input, and why the others are null. Each input starts with
   an empty response cache, so every answer is a real request.
2. **Goal success (paper 004)** with an LLM segmenter and one LLM teacher on the first
   ``--dialogues`` dialogues of ``data/samples/enterprise_dialogues.jsonl``, through the
   goal-success graph: model calls, tokens and seconds per dialogue with the single Appendix D
   call (the teacher's request is the segmenter's, answered by the response cache), and with
   the old two-call design, emulated by giving the segmenter a request of its own: no response
   cache, and a one-line note before its system message so that the prompt differs from the
   teacher's (llama.cpp would otherwise reuse the evaluated prompt). Both requests reach the
   server, as the old segmentation and teacher prompts did. (The old segmentation prompt asked
   for ``is_new_goal`` only, so its answer was shorter than Appendix D's; the emulation's second
   request costs what a full Appendix D request costs.)

The content of the answers is poor (a 135M model); the figures are about the plumbing: does
grammar-constrained decoding give answers the roles can use, and what does a label cost.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from bench.internals import (
    ACCOUNTING,
    LIMITS,
    SEGMENTATION,
    TURN_QUALITY,
    Context,
    LLMPolicy,
    LLMSettings,
    build_goal_success_graph,
    default_llm_cache,
    llm_cache_module,
    segmenter,
)
from scripts.llm_server import (
    DEFAULT_CHAT_FORMAT,
    DEFAULT_N_CTX,
    running_llm_server,
    unavailable_reason,
)
from tests.integration.test_llm_roles import PROBES, RoleProbe, dialogues, usage_since

TIMEOUT_S = 300.0
"""Long enough for a 1,024-token answer on a busy 2-core machine: a timed-out request keeps the
single-slot server busy, and its retry would queue behind it."""

_REASONS = (
    ("timed out / call failed", re.compile(r"model call failed|timed out", re.I)),
    ("items left unlabelled", re.compile(r"gave no label|skipped|no answer", re.I)),
    ("JSON invalid for the schema", re.compile(r"does not match|no JSON|invalid|required", re.I)),
)
_OVERFLOW = re.compile(r"longer than the model's context")


def reason_class(reason: str | None, completion_tokens: float) -> str:
    """A short name for why an answer is null.

    An overflow after the model had answered is a retry that did not fit: the first answer was
    unusable (typically cut off at the answer cap), and the retry appends it to the prompt.
    """
    if reason and _OVERFLOW.search(reason):
        return "unusable answer, retry over n_ctx" if completion_tokens else "prompt over n_ctx"
    for name, pattern in _REASONS:
        if reason and pattern.search(reason):
            return name
    return "other"


def model_calls(usage: dict[str, float]) -> float:
    """Requests that reached the model: invocations not served by the cache, plus retries."""
    return usage.get("calls", 0) - usage.get("cache_hits", 0) + usage.get("retries", 0)


def role_figures(probe: RoleProbe, spec: str, n: int) -> dict[str, Any]:
    """Ask ``probe`` about its first ``n`` inputs, each with an empty cache; sum what it cost."""
    inputs = probe.inputs(n)
    valid, calls, prompt, completion, seconds = 0, 0.0, 0.0, 0.0, 0.0
    why: Counter[str] = Counter()
    example = ""
    for item in inputs:
        default_llm_cache().clear()
        before = ACCOUNTING.snapshot()
        started = time.perf_counter()
        answer = probe.ask(spec, item)
        seconds += time.perf_counter() - started
        usage = usage_since(before, probe.role)
        calls += model_calls(usage)
        prompt += usage.get("prompt_tokens", 0)
        completion += usage.get("completion_tokens", 0)
        if answer.valid:
            valid += 1
        else:
            why[reason_class(answer.reason, usage.get("completion_tokens", 0))] += 1
            example = example or " ".join(str(answer.reason).split())[:150]
    k = max(1, len(inputs))
    return {
        "inputs": len(inputs),
        "valid": valid / k,
        "calls": calls / k,
        "prompt": prompt / k,
        "completion": completion / k,
        "seconds": seconds / k,
        "why": why,
        "example": example,
    }


def print_roles(spec: str, n: int) -> None:
    """The per-role table, one row per probe, printed as each role finishes."""
    print(f"\nPer role: first {n} inputs each, an empty response cache per input")
    header = f"{'role':<27} {'n':>3} {'valid':>6} {'calls':>6} {'prompt':>7} {'compl':>6} {'s':>6}"
    print(header + "   (per input: model calls, prompt/completion tokens, seconds)")
    null_reasons: list[str] = []
    for probe in PROBES:
        row = role_figures(probe, spec, n)
        print(
            f"{probe.name:<27} {row['inputs']:>3} {row['valid']:>6.0%} {row['calls']:>6.1f} "
            f"{row['prompt']:>7.0f} {row['completion']:>6.0f} {row['seconds']:>6.1f}",
            flush=True,
        )
        if row["why"]:
            counts = ", ".join(f"{name} {count}" for name, count in row["why"].most_common())
            null_reasons.append(f"  {probe.name}: {counts}; e.g. {row['example']}")
    if null_reasons:
        print("\nWhy answers were null:")
        print("\n".join(null_reasons))


SEGMENTER_NOTE = "Goal segmentation request.\n"
"""Put before the segmenter's system message in the two-call emulation, so that its prompt
differs from the teacher's as the old design's did: llama.cpp reuses the evaluated prompt of
the previous request, and would otherwise process the teacher's identical prompt for free."""


@contextmanager
def old_two_call_segmenter(context: Context) -> Iterator[None]:
    """The segmenter sends its own request: no response cache, a prompt of its own.

    The settings live on the Appendix D call's ``llm``; the per-window judges it derives from
    them (when it has any) are dropped before and after, so they are rebuilt from ``llm``.
    """
    call = segmenter(context).call  # type: ignore[attr-defined]
    llm, windows = call.llm, getattr(call, "_judges", {})
    saved = llm.cache, llm.system
    llm.cache, llm.system = None, SEGMENTER_NOTE + (llm.system or "")
    windows.clear()
    try:
        yield
    finally:
        llm.cache, llm.system = saved
        windows.clear()


def gsr_figures(context: Context, count: int, *, two_calls: bool) -> dict[str, float]:
    """Calls, tokens and seconds per dialogue through the goal-success graph."""
    graph = build_goal_success_graph().compile(checkpointer=InMemorySaver())
    default_llm_cache().clear()
    before = ACCOUNTING.snapshot()
    started = time.perf_counter()
    goals: list[int] = []
    labelled = turns = 0
    with old_two_call_segmenter(context) if two_calls else _nothing():
        for number, dialogue in enumerate(dialogues(count)):
            raw = dialogue.model_dump(mode="json", by_alias=True)
            config: Any = {"configurable": {"thread_id": f"{two_calls}-{number}"}}
            out = graph.invoke({"dialogue": raw}, config, context=context)
            goals.append(len(out["goals"]))
            for turn in out["turns"]:
                turns += 1
                labelled += any(t.get("quality") for t in turn["teachers"])
    seconds = time.perf_counter() - started
    usage = [usage_since(before, role) for role in (SEGMENTATION.name, TURN_QUALITY.name)]
    k = max(1, count)
    return {
        "calls": sum(model_calls(u) for u in usage) / k,
        "cache_hits": sum(u.get("cache_hits", 0) for u in usage) / k,
        "prompt": sum(u.get("prompt_tokens", 0) for u in usage) / k,
        "completion": sum(u.get("completion_tokens", 0) for u in usage) / k,
        "seconds": seconds / k,
        "with_goals": sum(1 for g in goals if g) / k,
        "labelled": labelled / max(1, turns),
    }


@contextmanager
def _nothing() -> Iterator[None]:
    yield


def print_gsr(spec: str, count: int) -> None:
    """One-call vs two-call figures per dialogue."""
    context = Context(
        judges={"segmentation": spec, "turn_quality": [spec]},
        llm=LLMSettings(context_tokens=DEFAULT_N_CTX),
        settings={"goal_success": {"escalate_ambiguous": False}},
    )
    print(
        f"\nGoal success, LLM segmenter + one LLM teacher, first {count} sample dialogues "
        f"(llm_context_tokens={DEFAULT_N_CTX}; a dialogue over the window is sent in windows)"
    )
    print(
        f"{'design':<30} {'calls':>6} {'hits':>5} {'prompt':>7} {'compl':>6} {'s':>6} "
        f"{'goals':>6} {'labelled':>8}   (per dialogue; goals: share with goals; "
        "labelled: share of turns with a teacher label)"
    )
    for name, two_calls in (("one Appendix D call", False), ("two calls (old, emulated)", True)):
        row = gsr_figures(context, count, two_calls=two_calls)
        print(
            f"{name:<30} {row['calls']:>6.2f} {row['cache_hits']:>5.2f} {row['prompt']:>7.0f} "
            f"{row['completion']:>6.0f} {row['seconds']:>6.1f} {row['with_goals']:>6.0%} "
            f"{row['labelled']:>8.0%}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--inputs", type=int, default=3, help="inputs per role (default 3)")
    parser.add_argument("--dialogues", type=int, default=5, help="GSR dialogues (default 5)")
    parser.add_argument("--chat-format", default=DEFAULT_CHAT_FORMAT)
    parser.add_argument("--skip-roles", action="store_true", help="only the GSR figures")
    parser.add_argument("--skip-gsr", action="store_true", help="only the per-role figures")
    args = parser.parse_args()
    if reason := unavailable_reason():
        print(f"bench.llm_roles skipped: {reason}")
        return
    home = tempfile.mkdtemp(prefix="todeval-bench-llm-")
    os.environ["TODEVAL_HOME"] = home  # a fresh response cache, left behind on exit
    llm_cache_module._default_cache = None
    LIMITS.configure(LLMPolicy(timeout_s=TIMEOUT_S))
    started = time.perf_counter()
    with running_llm_server(
        chat_format=args.chat_format, log_path=Path(home) / "server.log"
    ) as url:
        spec = f"openai:smollm2@{url}"
        print(
            f"SmolLM2-135M-Instruct, llama.cpp server ({args.chat_format}, n_ctx {DEFAULT_N_CTX})"
        )
        print(f"spec {spec}; server log {home}/server.log")
        if not args.skip_roles:
            print_roles(spec, args.inputs)
        if not args.skip_gsr:
            print_gsr(spec, args.dialogues)
    print(f"\ntotal {time.perf_counter() - started:.0f}s")


if __name__ == "__main__":
    main()
