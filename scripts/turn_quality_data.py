"""Labelled turn views from SGD for the learned turn-quality teachers (train, dev, held out).

Only SGD (``$TODEVAL_DATA_DIR/sgd``, CC BY-SA 4.0) and what the team wrote
(``scripts/turn_quality_corruptions.py``) go in:

* **Held-out services**: every SGD-train dialogue that touches one of :data:`HELDOUT_SERVICES`
  is kept out of training; 400 of them are the held-out report set. Training draws from the
  rest (70% at random, 30% from dialogues with a ``NOTIFY_FAILURE``). Thresholds are chosen on
  SGD **dev** (350 dialogues). The frozen sets in ``data/validation/`` are never read here.
* **Recorded failures** (:func:`recorded_label`, from SGD's acts and states): ``nf`` (the system
  turn has ``NOTIFY_FAILURE``, E5), ``correction`` (the system CONFIRMed and the next user frame
  changes a slot value already in the state, E1), ``repeat`` (the user requests a slot again,
  E1), ``alternatives`` (the system OFFERed, the user asks nothing and the next system turn
  offers another value or the user changed a constraint, E3). An unprompted value change
  anywhere else is ``ambiguous`` (weight 0, left out).
* **Corrupted replies** (30% of the real successes, the copy beside the original) with written
  reactions (60%) or the real next turn (``corrupt:benign``, 40%); **adversarial positives**
  (5%): a right reply opened like a repair ("Sorry about that. ...") stays a success.

Each set is built from its own seeded random source, so the held-out set can be rebuilt alone.
"""

from __future__ import annotations

import gzip
import json
import random
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from scripts import turn_quality_corruptions as corrupt
from todeval.evals.datasets.sgd import sgd_compact_dialogue
from todeval.nodes.goal_success.judges.turn_quality.evidence import TurnView, turn_views
from todeval.stores.paths import data_dir

HELDOUT_SERVICES = frozenset(
    {"Banks_1", "Events_1", "Flights_2", "Hotels_2", "Music_1", "RentalCars_2", "RideSharing_1",
     "Services_2"}
)  # fmt: skip
"""SGD services held out of training (any dialogue touching one is kept out)."""
ORIGINAL_KINDS = frozenset({"real", "nf", "correction", "alternatives", "repeat"})
"""Kinds of unmodified SGD turns (the recorded labels)."""
REACTION_ONLY = frozenset({"correction", "alternatives", "repeat"})
"""Recorded failures that only the user's reaction shows."""
CORRUPT_SHARE, BENIGN_SHARE, HARDNEG_SHARE = 0.3, 0.4, 0.05
SIZES = {"train": 2000, "report": 400, "dev": 350}
SEED_OFFSETS = {"train": 0, "report": 1, "dev": 2}


@dataclass(frozen=True)
class LabelledView:
    """A turn view with its label, where it came from, and what made it."""

    view: TurnView
    label: int  # 1 = failure
    code: str | None
    kind: str  # a recorded kind, corrupt:written, corrupt:benign, hardneg
    weight: float
    dialogue: str
    turn_index: int  # 0-based turn of the source dialogue


@dataclass
class SgdTurn:
    """One Mind-the-Goal turn of a compact SGD record, with the user's states around it."""

    user: str
    system: str
    user_frames: list[dict[str, Any]]
    system_frames: list[dict[str, Any]]
    before: dict[str, dict[str, list[str]]]
    after: dict[str, dict[str, list[str]]]

    def acts(self) -> list[tuple[str, str, list[str], str]]:
        """``(act, slot, values, service)`` of the system reply."""
        return [(a[0], a[1], a[2], f["svc"]) for f in self.system_frames for a in f.get("act", [])]

    def service(self, default: str) -> str:
        """The service the system reply is about."""
        return str(self.system_frames[0]["svc"]) if self.system_frames else default


@dataclass
class Pools:
    """What corruptions draw from: replies, slot values and requests of a set's dialogues."""

    replies: dict[str, list[tuple[str, frozenset[str]]]] = field(default_factory=dict)
    values: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    paraphrases: dict[tuple[Any, ...], list[str]] = field(default_factory=dict)
    openers: list[str] = field(default_factory=list)

    @property
    def services(self) -> list[str]:
        """Services with at least one reply, sorted."""
        return sorted(self.replies)


def load_sgd(split: str) -> list[dict[str, Any]]:
    """The compact SGD records of ``split`` (``train`` or ``dev``)."""
    with gzip.open(data_dir() / "sgd" / f"sgd_{split}.jsonl.gz", "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def sgd_turns(record: dict[str, Any]) -> list[SgdTurn]:
    """A record's turns, with the user's slot values before and after each user message."""
    utterances = record["turns"]
    state: dict[str, dict[str, list[str]]] = {}
    turns = []
    for index in range(0, len(utterances), 2):
        user = utterances[index]
        empty: dict[str, Any] = {"t": "", "f": []}
        system = utterances[index + 1] if index + 1 < len(utterances) else empty
        before = {service: dict(values) for service, values in state.items()}
        for frame in user["f"]:
            state[frame["svc"]] = frame["sv"]
        after = {service: dict(values) for service, values in state.items()}
        turns.append(SgdTurn(user["t"], system["t"], user["f"], system["f"], before, after))
    return turns


def recorded_label(turns: list[SgdTurn], k: int) -> tuple[int, str | None, str, float]:
    """``(label, code, kind, weight)`` of real system turn ``k`` from SGD's records."""
    turn = turns[k]
    acts = turn.acts()
    names = {act[0] for act in acts}
    if "NOTIFY_FAILURE" in names:
        return 1, "E5", "nf", 1.0
    if k + 1 >= len(turns):
        return 0, None, "real", 1.0
    following = turns[k + 1]
    changed = any(
        slot in turn.after.get(frame["svc"], {})
        and not set(values) & set(turn.after[frame["svc"]][slot])
        for frame in following.user_frames
        for slot, values in frame["sv"].items()
    )
    asked = {(f["svc"], r) for f in turn.user_frames for r in f["req"]}
    if asked & {(f["svc"], r) for f in following.user_frames for r in f["req"]}:
        return 1, "E1", "repeat", 1.0
    if "CONFIRM" in names and changed:
        return 1, "E1", "correction", 1.0
    if "OFFER" in names:
        offered: dict[tuple[str, str], set[str]] = defaultdict(set)
        for act, slot, values, service in acts:
            if act == "OFFER":
                offered[(service, slot)] |= set(values)
        again: dict[tuple[str, str], set[str]] = defaultdict(set)
        for act, slot, values, service in following.acts():
            if act == "OFFER":
                again[(service, slot)] |= set(values)
        asks_nothing = not any(frame["req"] for frame in following.user_frames)
        other_offer = any(key in again and not again[key] & offered[key] for key in offered)
        if (asks_nothing and other_offer) or changed:
            return 1, "E3", "alternatives", 1.0
    if changed:
        return 0, None, "ambiguous", 0.0  # the user changed their mind unprompted: left out
    return 0, None, "real", 1.0


def paraphrase_key(turn: SgdTurn) -> tuple[Any, ...]:
    """Requests with the same key say the same thing: service, intent, new and asked slots."""
    none: dict[str, Any] = {"svc": "", "intent": "", "sv": {}}
    frame = turn.user_frames[0] if turn.user_frames else none
    before = turn.before.get(frame["svc"], {})
    new = tuple(sorted(slot for slot in frame["sv"] if slot not in before))
    return frame["svc"], frame["intent"], new, tuple(sorted(frame.get("req", [])))


def make_pools(records: list[dict[str, Any]]) -> Pools:
    """The pools of a set of records (each set draws only from its own dialogues)."""
    replies: dict[str, list[tuple[str, frozenset[str]]]] = defaultdict(list)
    values: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    paraphrases: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    openers: list[str] = []
    for record in records:
        for k, turn in enumerate(sgd_turns(record)):
            if turn.system_frames:
                acts = frozenset(act[0] for act in turn.acts())
                replies[turn.system_frames[0]["svc"]].append((turn.system, acts))
            for frame in turn.user_frames:
                for slot, given in frame["sv"].items():
                    values[frame["svc"]][slot].update(given)
            paraphrases[paraphrase_key(turn)].append(turn.user)
            if k == 0:
                openers.append(turn.user)
    return Pools(
        replies=dict(replies),
        values={s: {slot: sorted(v) for slot, v in slots.items()} for s, slots in values.items()},
        paraphrases=dict(paraphrases),
        openers=openers[:3000],
    )


def split_records(seed: int, n_train: int = SIZES["train"]) -> dict[str, list[dict[str, Any]]]:
    """The records of each set, and of the pools its corruptions draw from.

    Returns:
        ``train``, ``report`` (held-out services) and ``dev`` records, and ``<set>_pool``: the
        records whose replies, values and requests that set's corruptions may use.
    """
    train = load_sgd("train")
    held = [r for r in train if set(r["services"]) & HELDOUT_SERVICES]
    rest = [r for r in train if not set(r["services"]) & HELDOUT_SERVICES]
    with_nf = [r for r in rest if any(a[0] == "NOTIFY_FAILURE" for a in _all_acts(r))]
    rng = random.Random(seed)
    rng.shuffle(rest)
    rng.shuffle(with_nf)
    picked = rest[: int(n_train * 0.7)] + with_nf[: int(n_train * 0.3)]
    chosen = {r["dialogue_id"]: r for r in picked}
    rng.shuffle(held)
    dev = load_sgd("dev")
    rng.shuffle(dev)
    return {
        "train": list(chosen.values()),
        "train_pool": rest,
        "report": held[: SIZES["report"]],
        "report_pool": held,
        "dev": dev[: SIZES["dev"]],
        "dev_pool": dev,
    }


def _all_acts(record: dict[str, Any]) -> Iterator[list[Any]]:
    for utterance in record["turns"]:
        for frame in utterance["f"]:
            yield from frame.get("act", [])


def build_views(
    records: list[dict[str, Any]], pools: Pools, rng: random.Random
) -> list[LabelledView]:
    """Every real turn of ``records`` with its recorded label, plus corruptions and positives."""
    out: list[LabelledView] = []
    for record in records:
        dialogue = sgd_compact_dialogue(record)
        turns = sgd_turns(record)
        for k, view in enumerate(turn_views(dialogue)):
            if not view.response:
                continue
            label, code, kind, weight = recorded_label(turns, k)
            made = LabelledView(view, label, code, kind, weight, record["dialogue_id"], k)
            out.append(made)
            success = kind == "real" and not label
            if success and view.next_user is not None and rng.random() < HARDNEG_SHARE:
                opening = rng.choice(corrupt.REPAIR_OPENINGS)
                hard = replace(view, response=opening + view.response)
                out.append(replace(made, view=hard, kind="hardneg"))
            if not success or rng.random() > CORRUPT_SHARE:
                continue
            service = turns[k].service(record["services"][0])
            failed = corrupt_view(made, turns[k], service, rng, pools)
            if failed is not None:
                out.append(failed)
    return out


def corrupt_view(
    made: LabelledView, turn: SgdTurn, service: str, rng: random.Random, pools: Pools
) -> LabelledView | None:
    """A failed copy of a successful turn, with a reaction (None when the code does not fit)."""
    view = made.view
    names = frozenset(act[0] for act in turn.acts())
    domain = service.split("_")[0]
    other = rng.choice([s for s in pools.services if s.split("_")[0] != domain])
    code = rng.choices(list(corrupt.CODE_WEIGHTS), weights=list(corrupt.CODE_WEIGHTS.values()))[0]
    values = ("", "")
    response: str | None
    if code == "E1":
        same = pools.replies.get(service, [])
        drawn = [rng.choice(same) for _ in range(8)] if same else []
        response = next((text for text, acts in drawn if acts != names), None)
    elif code == "E6":
        response = rng.choice(pools.replies[other])[0]
    elif code == "E2":
        response = corrupt.fill(rng.choice(corrupt.REFUSALS), service, other, rng)
    elif code == "E3":
        state = turn.after.get(service, {})
        swapped = corrupt.swap_value(view.response, state, pools.values.get(service, {}), rng)
        response = swapped[0] if swapped else None
        values = (swapped[1], swapped[2]) if swapped else values
    elif code == "E4":
        found = names & {"OFFER", "INFORM", "INFORM_COUNT"}
        template = rng.choice(corrupt.NOTHING_FOUND)
        response = corrupt.fill(template, service, other, rng) if found else None
    elif code == "E5":
        if rng.random() < 0.55:
            response = corrupt.cut_off(view.response, rng)
        else:
            response = corrupt.fill(rng.choice(corrupt.ERRORS), service, other, rng)
    else:
        response = corrupt.fill(rng.choice(corrupt.OUT_OF_SCOPE), service, other, rng)
    if response is None:
        return None
    if view.next_user is not None and rng.random() < BENIGN_SHARE:
        reaction, kind = view.next_user, "corrupt:benign"
    else:
        key = paraphrase_key(turn)
        paraphrases = [p for p in pools.paraphrases.get(key, []) if p != view.user][:50]
        reaction = corrupt.write_reaction(
            code, view.user, (service, other), rng, paraphrases, pools.openers, values
        )
        kind = "corrupt:written"
    failed = replace(view, response=response, next_user=reaction)
    return replace(made, view=failed, label=1, code=code, kind=kind, weight=1.0)


def labelled_sets(
    seed: int, names: tuple[str, ...], n_train: int = SIZES["train"]
) -> dict[str, list[LabelledView]]:
    """The labelled views of the named sets (``train``, ``report``, ``dev``)."""
    records = split_records(seed, n_train)
    return {
        name: build_views(
            records[name],
            make_pools(records[f"{name}_pool"]),
            random.Random(seed + SEED_OFFSETS[name]),
        )
        for name in names
    }
