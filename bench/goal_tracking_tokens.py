"""Benchmark: prompt tokens per utterance, batched goal tracker vs the full-context baseline.

Long conversations are made by concatenating SGD dev dialogues (in file order) into
``--length`` utterances. After each utterance:

* the **batched pipeline** sends :data:`TURN_UPDATE_PROMPT` with the last ``--context``
  utterances and the ``--top-k`` goals in memory (the gold goals mentioned so far, with their
  gold statuses and slot values, the most recently updated first: a stand-in for retrieval),
  plus :data:`GRAPH_EVOLUTION_PROMPT` when a gold goal is first mentioned and
  :data:`AUDIT_PROMPT` every ``--audit-every`` utterances;
* the **full-context baseline** sends :data:`FULL_CONTEXT_PROMPT` with the whole dialogue so far.

Both include the compact ``schema_dev.json`` listing. The judges run for real against
``tests.fakes.ScriptedChatModel``, whose token count is whitespace words, so the figures are
words, not a provider's tokens. Figures only; not a test.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from bench.internals import (
    Dialogue,
    FullContextJudge,
    Goal,
    JudgeAccounting,
    LLMAuditor,
    LLMGraphEvolver,
    LLMTurnUpdater,
    ServiceSchema,
    Utterance,
    data_dir,
    dialogue_utterances,
    llm_module,
    load_dialogues,
    load_sgd_schema,
    render_schema,
    sgd_to_atod,
    split_records,
)
from tests.fakes import ScriptedChatModel, count_tokens

SPEC = "openai:token-counter"
#: One reply every judge accepts (each output model ignores the others' keys).
EMPTY_ANSWER = '{"goals": [], "links": [], "updates": []}'


@dataclass
class Conversation:
    """A synthetic long conversation with its gold goals' lifecycles."""

    utterances: list[Utterance] = field(default_factory=list)
    goals: dict[str, Goal] = field(default_factory=dict)  # id -> goal (final slots)
    first: dict[str, int] = field(default_factory=dict)  # id -> index of its first mention
    states: list[dict[str, tuple[str, int]]] = field(default_factory=list)  # after each index


def conversations(
    dialogues: Sequence[Dialogue], schema: dict[str, ServiceSchema], length: int
) -> Iterator[Conversation]:
    """Concatenate dialogues into conversations of exactly ``length`` utterances."""
    current = Conversation()
    for dialogue in dialogues:
        offset, gold = len(current.utterances), sgd_to_atod(dialogue, schema)
        ids = {g.id: f"g{len(current.goals) + n}" for n, g in enumerate(gold.goal_list, start=1)}
        for g in gold.goal_list:
            current.goals[ids[g.id]] = Goal.from_dict(
                {"id": ids[g.id], "dialogue_id": "synthetic", "status": "open",
                 "description": g.core_content or g.content, "domain": g.domain,
                 "intent": g.intent, "slots": {k: str(v) for k, v in g.slot_values.items()}}
            )  # fmt: skip
        state = dict(current.states[-1]) if current.states else {}
        for k, (utterance, turn) in enumerate(
            zip(dialogue_utterances(dialogue), gold.turns, strict=True)
        ):
            index = offset + k
            current.utterances.append(Utterance(index + 1, utterance.speaker, utterance.text))
            for goal_id, status in turn.all_goals.items():
                if status == "not_mentioned":
                    continue
                mine = ids[goal_id]
                current.first.setdefault(mine, index)
                if state.get(mine, ("", 0))[0] != status:
                    state[mine] = (status, index + 1)
            current.states.append(dict(state))
            if len(current.utterances) == length:
                yield current
                current = Conversation()
                break


def memory_before(conversation: Conversation, index: int, top_k: int | None) -> list[Goal]:
    """The goals in memory before utterance ``index``, most recently updated first."""
    state = conversation.states[index - 1] if index > 0 else {}
    goals = [
        Goal.from_dict(
            conversation.goals[goal_id].to_dict()
            | {"status": status, "created_turn": conversation.first[goal_id] + 1,
               "updated_turn": updated}
        )
        for goal_id, (status, updated) in state.items()
    ]  # fmt: skip
    goals.sort(key=lambda goal: (-goal.updated_turn, goal.id))
    return goals if top_k is None else goals[:top_k]


def main() -> None:
    """Print prompt tokens per utterance along the dialogue for both methods."""
    parser = argparse.ArgumentParser(description=__doc__)
    sgd = data_dir() / "sgd"
    parser.add_argument("--dev", type=Path, default=sgd / "sgd_dev.jsonl.gz")
    parser.add_argument("--schema", type=Path, default=sgd / "schema_dev.json")
    parser.add_argument("--conversations", type=int, default=20)
    parser.add_argument("--length", type=int, default=60, help="utterances per conversation")
    parser.add_argument("--context", type=int, default=4, help="turn-update context window")
    parser.add_argument("--top-k", type=int, default=5, help="memory goals in the turn update")
    parser.add_argument("--audit-every", type=int, default=10)
    args = parser.parse_args()

    schema = load_sgd_schema(args.schema)
    schema_text = render_schema(schema)
    dialogues, _errors = split_records(load_dialogues(args.dev))
    convs = list(conversations(dialogues, schema, args.length))[: args.conversations]

    model = ScriptedChatModel(fallback=EMPTY_ANSWER)
    with mock.patch.object(llm_module, "load_chat_model", lambda spec, **kw: model):
        accounting = JudgeAccounting()
        updater = LLMTurnUpdater(
            SPEC, context_window=args.context, cache=None, accounting=accounting
        )
        evolver = LLMGraphEvolver(SPEC, cache=None, accounting=accounting)
        auditor = LLMAuditor(SPEC, cache=None, accounting=accounting)
        baseline = FullContextJudge(SPEC, cache=None, accounting=accounting)
        turn_update: list[list[int]] = [[] for _ in range(args.length)]
        full: list[list[int]] = [[] for _ in range(args.length)]
        extra_tokens, evolve_calls, audit_calls, inserted = [], 0, 0, 0
        for conv in convs:
            for k, utterance in enumerate(conv.utterances):
                before = conv.utterances[:k]
                memory = memory_before(conv, k, args.top_k)
                update = updater.update(utterance, before, memory, schema_text)
                turn_update[k].append(update.call.prompt_tokens)
                baseline.goals(conv.utterances[: k + 1], schema_text)
                full[k].append(baseline.last.prompt_tokens)
                after = memory_before(conv, k + 1, None)
                for new in (g for g in after if conv.first[g.id] == k):
                    inserted += 1
                    others = [g for g in after if g.id != new.id][: args.top_k]
                    evolver.links(new, others)
                    evolve_calls += evolver.last.llm_calls
                    extra_tokens.append(evolver.last.prompt_tokens)
                if (k + 1) % args.audit_every == 0:
                    auditor.audit(after, conv.utterances[: k + 1])
                    audit_calls += auditor.last.llm_calls
                    extra_tokens.append(auditor.last.prompt_tokens)

    n, utterances = len(convs), len(convs) * args.length
    print(
        f"{n} conversations x {args.length} utterances from {args.dev.name} "
        f"({sum(len(c.first) for c in convs) / n:.1f} gold goals each); "
        f"context window {args.context}, top-k {args.top_k}; schema listing "
        f"{count_tokens(schema_text)} tokens (in both prompts). Tokens = whitespace words."
    )
    print(f"\n{'turn':>5} | {'turn update (batched)':>24} | {'full context':>24} | ratio")
    for t in sorted({1, 10, *range(10, args.length + 1, 10)}):
        a, b = turn_update[t - 1], full[t - 1]
        print(
            f"{t:>5} | {statistics.mean(a):>8.0f} ({min(a):>5}-{max(a):<5})    | "
            f"{statistics.mean(b):>8.0f} ({min(b):>5}-{max(b):<5})    | "
            f"{statistics.mean(b) / statistics.mean(a):4.2f}x"
        )
    for label, series in (("turn update", turn_update), ("full context", full)):
        if len(series) >= 50:
            growth = statistics.mean(series[49]) / statistics.mean(series[9])
            print(f"  {label}: turn 50 / turn 10 = {growth:.2f}x")
    pipeline = sum(map(sum, turn_update)) + sum(extra_tokens)
    print(
        f"\nPer utterance over all {args.length}: batched pipeline "
        f"{(utterances + evolve_calls + audit_calls) / utterances:.2f} calls, "
        f"{pipeline / utterances:.0f} prompt tokens (turn update + {evolve_calls} graph "
        f"evolutions for {inserted} new goals + {audit_calls} audits); full context 1 call, "
        f"{sum(map(sum, full)) / utterances:.0f} prompt tokens."
    )


if __name__ == "__main__":
    main()
