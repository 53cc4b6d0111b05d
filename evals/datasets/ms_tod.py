"""An MS-TOD-style multi-session benchmark built from SGD (paper 001, §3, App. B).

MS-TOD (paper 001) groups GPT-4-generated sessions into *individuals*: each holds earlier
sessions of several intents and, per intent, a final session whose confirmation response must
recall the stored task goal. The paper's data is not public; this builder derives the same shape
from SGD dialogues in which the system confirms a transaction (a ``CONFIRM`` act):

- Each such dialogue is split at the user utterance ``u`` before the system's first CONFIRM.
  The utterances before ``u`` become a stored session (``content``); its ``task_goal`` is the
  user's slot state for the confirmed service at ``u`` (the state the confirmation is built
  from). A slot the CONFIRM act also carries is stored in the confirmed form: the user may have
  said "Philly" or "Thursday next week" (that stays in the content), the system confirmed
  "Philadelphia" and "March 7th", as MS-TOD's task goals hold the resolved value. Other slots
  keep the equivalent value the user said. Dialogues where ``u`` is the first
  utterance are skipped (nothing to store).
- The evaluation item is ``u`` in a *new* session, preceded by a re-entry sentence naming one
  stored value, as returning users do: ``"Hi again, it's about the {intent in words} for
  {value}."``. The value is a name, else a place, never a number or a flag, and preferably one
  the same-intent sibling sessions do not hold. Dialogues with no such value are skipped.
  With ``hard=True`` the re-entry sentence names no stored value (``"Hi again, it's about
  the {intent in words}."``): only ``u`` itself can tell the intent's sessions apart, so
  memory must be found from the intent and whatever ``u`` says; the items, sessions and gold
  are the same as the default bench's of the same seed.
  Gold ``task_goal`` = the CONFIRM act's slot values; ``reference_response`` = the CONFIRM
  utterance; ``relevant_session_ids`` = the stored session. The intent is given (as in MS-TOD)
  and the service is kept as the item's extra field ``domain``.
- An individual holds 7 intents x 3 sessions (21 sessions, 21 eval items); the other sessions
  of the same intent, with different values, are the hard negatives. An intent is SGD's intent
  name (``ReserveHotel`` of ``Hotels_1`` and ``Hotels_4`` is one intent). Individuals are
  filled greedily from the intents with the most dialogues left, so as many as possible form.
  Sessions are shuffled and numbered ``s01``.. (a larger number is more recent, as in Fig. 12).

Departures from MS-TOD: sessions are real, independent SGD dialogues rather than one generated
story continued over sessions; an individual has 21 sessions (MS-TOD: about 24) and one eval
item per session rather than one per intent; the stored content stops before ``u``, so values
the user first gave in ``u`` are in the task goal (and repeated in the eval context) but not in
the stored text. A stored session's ``task_goal`` therefore holds the gold confirmation's values
(confirmed forms, values said only in ``u``): a bank built from it is an oracle memory. MAP's
local bank is read from the stored ``content`` instead (``memory.bank_source = "dialogue"``, the
default); the task-goal bank is the named oracle ``task_goal_oracle``
(:mod:`nodes.memory.settings`). Same seed, same input -> byte-identical JSON
(:func:`dump_memory_bench`).
:func:`load_memory_bench` (:mod:`evals.datasets.ms_tod_loader`, re-exported here) reads it back.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from todeval.evals.datasets.errors import DatasetFormatError
from todeval.evals.datasets.loader import load_dialogues
from todeval.evals.datasets.ms_tod_loader import load_memory_bench
from todeval.evals.memory_schema import Individual, MemoryBench, MsTodEvalItem, MsTodSession
from todeval.evals.memory_words import intent_in_words, is_number_or_boolean, slot_kind
from todeval.evals.schema import Dialogue, RecordError

__all__ = [
    "INTENTS_PER_INDIVIDUAL",
    "REENTRY_TEMPLATE",
    "REENTRY_TEMPLATE_HARD",
    "SESSIONS_PER_INTENT",
    "build_memory_bench",
    "dump_memory_bench",
    "load_memory_bench",
]

#: Intents per individual and sessions per intent (one eval item per session).
INTENTS_PER_INDIVIDUAL = 7
SESSIONS_PER_INTENT = 3
REENTRY_TEMPLATE = "Hi again, it's about the {intent} for {value}."
REENTRY_TEMPLATE_HARD = "Hi again, it's about the {intent}."
"""The harder bench's re-entry sentence: the intent only, no stored value."""


@dataclass(frozen=True)
class _Candidate:
    """One SGD dialogue usable as a stored session plus its eval item."""

    dialogue_id: str
    domain: str
    intent: str
    content: list[dict[str, str]]
    task_goal: dict[str, str]
    utterance: str
    gold: dict[str, str]
    reference_response: str
    reentry_values: list[str]  # names first, then places


def build_memory_bench(
    sgd_path: str | Path,
    split: str,
    *,
    seed: int = 0,
    individuals: int | None = None,
    errors: list[RecordError] | None = None,
    hard: bool = False,
) -> MemoryBench:
    """Build the MS-TOD-style benchmark from SGD (see the module docstring).

    Args:
        sgd_path: A compact SGD file, a folder holding ``sgd_<split>.jsonl[.gz]``, an original
            release split folder or the release root holding it.
        split: ``train``, ``dev`` or ``test``: picks the file inside a folder.
        seed: Seeds the shuffles; the same seed gives the same benchmark.
        individuals: Stop after this many individuals (default: as many as the data allows).
        errors: If given, SGD records that could not be read are appended here.
        hard: Re-entry sentences name no stored value (:data:`REENTRY_TEMPLATE_HARD`).

    Raises:
        DatasetFormatError: If no SGD data for ``split`` is found at ``sgd_path``.
    """
    pools: dict[str, list[_Candidate]] = {}
    for item in load_dialogues(_sgd_source(Path(sgd_path), split), format="sgd"):
        if isinstance(item, RecordError):
            if errors is not None:
                errors.append(item)
            continue
        candidate = _candidate(item)
        if candidate is not None:
            pools.setdefault(candidate.intent, []).append(candidate)
    rng = random.Random(seed)
    for intent in sorted(pools):
        pools[intent].sort(key=lambda c: c.dialogue_id)
        rng.shuffle(pools[intent])
    built: list[Individual] = []
    while individuals is None or len(built) < individuals:
        open_intents = sorted(i for i in pools if len(pools[i]) >= SESSIONS_PER_INTENT)
        if len(open_intents) < INTENTS_PER_INDIVIDUAL:
            break
        rng.shuffle(open_intents)  # ties in the stable sort below fall in seeded order
        open_intents.sort(key=lambda i: -len(pools[i]))
        groups = [_take_siblings(pools[i]) for i in open_intents[:INTENTS_PER_INDIVIDUAL]]
        built.append(_individual(f"ind{len(built) + 1:03d}", groups, rng, hard=hard))
    return MemoryBench(individuals=built)


def dump_memory_bench(bench: MemoryBench, path: str | Path) -> None:
    """Write a benchmark as JSON (stable key order and layout, so reruns are byte-identical)."""
    Path(path).write_text(bench.model_dump_json(indent=1) + "\n", encoding="utf-8")


def _sgd_source(path: Path, split: str) -> Path:
    if path.is_file():
        return path
    for candidate in (
        path / f"sgd_{split}.jsonl.gz",
        path / f"sgd_{split}.jsonl",
        path / "sgd" / f"sgd_{split}.jsonl.gz",
        path / split,
    ):
        if candidate.exists():
            return candidate
    if path.is_dir() and path.name == split:
        return path
    raise DatasetFormatError(
        f"{path}: no SGD {split!r} data (expected a compact file, a folder with "
        f"sgd_{split}.jsonl.gz, or the original release folder {split}/)"
    )


def _candidate(dialogue: Dialogue) -> _Candidate | None:
    """The dialogue as a stored session + eval item, or None if it does not qualify."""
    for index, turn in enumerate(dialogue.turns):
        confirm = next(
            (f for f in turn.metadata.get("sgd_system_frames", []) if _confirm_acts(f)), None
        )
        if confirm is None:
            continue
        if index == 0:
            return None  # u is the first utterance: no earlier session to store
        service = str(confirm["svc"])
        frame = next(
            (f for f in turn.metadata.get("sgd_user_frames", []) if f.get("svc") == service), None
        )
        if frame is None or frame.get("intent") in (None, "NONE"):
            return None
        content = [
            {"speaker": speaker, "utterance": text}
            for earlier in dialogue.turns[:index]
            for speaker, text in (("user", earlier.user_msg), ("system", earlier.response))
            if text.strip()
        ]
        said = " ".join(t["utterance"] for t in content) + " " + turn.user_msg
        gold = {slot: values[0] for slot, values in _confirm_acts(confirm) if values}
        task_goal = {
            slot: _stored_value(values, gold.get(slot), said)
            for slot, values in frame["sv"].items()
            if values
        }
        reentry = [
            v
            for kind in ("name", "place")
            for s, v in task_goal.items()
            if slot_kind(s) == kind and not is_number_or_boolean(v)
        ]
        if not task_goal or not reentry or not turn.user_msg.strip():
            return None
        return _Candidate(
            dialogue_id=dialogue.dialogue_id,
            domain=service,
            intent=str(frame["intent"]),
            content=content,
            task_goal=task_goal,
            utterance=turn.user_msg.strip(),
            gold=gold,
            reference_response=turn.response,
            reentry_values=reentry,
        )
    return None


def _confirm_acts(frame: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    return [(a[1], list(a[2])) for a in frame.get("act", []) if a[0] == "CONFIRM" and a[1]]


def _stored_value(values: Sequence[str], confirmed: str | None, said: str) -> str:
    """The value to store for a slot: the confirmed form, else the one said, else the first."""
    if confirmed is not None:
        return confirmed
    return next((v for v in values if v.lower() in said.lower()), values[0])


def _take_siblings(pool: list[_Candidate]) -> list[_Candidate]:
    """Pop the intent's sessions for one individual, preferring distinct re-entry values."""
    chosen = [pool.pop(0)]
    while len(chosen) < SESSIONS_PER_INTENT:
        taken = {v.lower() for c in chosen for v in c.task_goal.values()}
        at = next((i for i, c in enumerate(pool) if c.reentry_values[0].lower() not in taken), 0)
        chosen.append(pool.pop(at))
    return chosen


def _individual(
    individual_id: str, groups: Iterable[list[_Candidate]], rng: random.Random, *, hard: bool
) -> Individual:
    placed: list[tuple[_Candidate, str]] = []
    for siblings in groups:
        for candidate in siblings:
            others = {
                v.lower() for c in siblings if c is not candidate for v in c.task_goal.values()
            }
            value = next(
                (v for v in candidate.reentry_values if v.lower() not in others),
                candidate.reentry_values[0],
            )
            placed.append((candidate, value))
    rng.shuffle(placed)
    sessions: list[MsTodSession] = []
    items: list[MsTodEvalItem] = []
    for number, (candidate, value) in enumerate(placed, start=1):
        session_id = f"s{number:02d}"
        sessions.append(
            MsTodSession.model_validate(
                {
                    "session_id": session_id,
                    "domain": candidate.domain,
                    "intent": candidate.intent,
                    "reference_dialogue_id": candidate.dialogue_id,
                    "content": candidate.content,
                    "task_goal": candidate.task_goal,
                }
            )
        )
        template = REENTRY_TEMPLATE_HARD if hard else REENTRY_TEMPLATE
        reentry = template.format(intent=intent_in_words(candidate.intent), value=value)
        items.append(
            MsTodEvalItem.model_validate(
                {
                    "eval_id": f"{individual_id}/e{number:02d}",
                    "intent": candidate.intent,
                    "domain": candidate.domain,
                    "reference_dialogue_id": candidate.dialogue_id,
                    "context": [
                        {"speaker": "user", "utterance": f"{reentry} {candidate.utterance}"}
                    ],
                    "task_goal": candidate.gold,
                    "reference_response": candidate.reference_response,
                    "relevant_session_ids": [session_id],
                }
            )
        )
    return Individual(individual_id=individual_id, sessions=sessions, eval=items)
