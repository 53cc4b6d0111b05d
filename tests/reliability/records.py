"""Well-formed records of every input todeval reads, built from hypothesis-drawn material.

Drawing every field of 10,000 records through hypothesis strategies costs about 25 ms a record
(hundreds of choices each), minutes per loader. So hypothesis draws, per batch, a pool of texts
(unicode, right-to-left marks, emoji, control characters, long strings) and, per record, a
seeded :class:`random.Random` (one choice: its seed); the builders
below lay the record out from those. A record is then one or two choices plus its damage, a
batch of hundreds stays a cheap example, and a failure still replays from the same seed.

"Well-formed" is strict: every record built here must load, whatever its texts, and must give
every view ``todeval evaluate`` builds (so a transcript opens with a user message and a
dialogue has a user turn). Each builder leaves the id out; the batch sets it. Dialogues are
built here; transcripts in :mod:`~tests.reliability.agent_records`, memory inputs in
:mod:`~tests.reliability.memory_records`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from random import Random
from typing import Any

from hypothesis import strategies as st

Json = Any
Strategy = st.SearchStrategy[Any]
Builder = Callable[[Random, "Texts"], dict[str, Any]]

# Any character JSON can carry, control characters included; lone surrogates are malformed
# input (damage.py makes them), not text.
CHARACTERS = st.characters(codec="utf-8", exclude_categories=["Cs"])
TEXT = st.text(CHARACTERS, max_size=16)
# Long strings are built, not drawn character by character (that would be slow).
LONG_TEXT = st.builds(
    lambda piece, times: piece * times,
    st.sampled_from(["ab ", "é", "\x00", "\u202e", "🙂", "\r\n", "\\", '"', "\u2028"]),
    st.integers(100, 1000),
)
TEXT_POOL = st.lists(st.one_of(TEXT, TEXT, TEXT, LONG_TEXT), min_size=3, max_size=10)
# One choice per record: a plain Random is much cheaper to call than hypothesis's own randoms.
RANDOM = st.integers(0, 2**32 - 1).map(Random)

SERVICES = ["Restaurants_2", "Hotels_1", "RideSharing_1", "Events_3"]
INTENTS = ["ReserveRestaurant", "FindRestaurants", "GetRide", "NONE"]
ACTS = ["INFORM", "OFFER", "CONFIRM", "REQUEST", "INFORM_COUNT", "NOTIFY_SUCCESS", "NOTIFY_FAILURE"]
SLOTS = ["city", "time", "restaurant_name", "number_of_seats"]
_FIRST_CHARACTERS = "aZé漢🙂1?"


@dataclass(frozen=True)
class Texts:
    """A batch's drawn texts, and the record's random choices over them."""

    pool: list[str]
    rng: Random

    def any(self) -> str:
        """Any drawn text, empty and blank ones included."""
        return self.rng.choice(self.pool)

    def said(self) -> str:
        """What someone says first: never blank (an empty first message is no turn at all)."""
        return self.rng.choice(_FIRST_CHARACTERS) + self.any()

    def short(self) -> str:
        """A short text (names, labels, values)."""
        return self.any()[:12]

    def some(self, make: Callable[[], Any], most: int, least: int = 0) -> list[Any]:
        """Between ``least`` and ``most`` values of ``make()``."""
        return [make() for _ in range(self.rng.randint(least, most))]

    def maybe(self, fields: dict[str, Callable[[], Any]]) -> dict[str, Any]:
        """Each optional field with probability 1/2."""
        return {key: make() for key, make in fields.items() if self.rng.random() < 0.5}

    def json_value(self, depth: int = 2) -> Json:
        """Free JSON (metadata): scalars, lists and objects, a few levels deep."""
        rng = self.rng
        kind = rng.randrange(7 if depth else 5)
        if kind == 0:
            return None
        if kind == 1:
            return rng.random() < 0.5
        if kind == 2:
            return rng.choice([0, -1, 2**63, -(2**63), rng.randint(-(10**6), 10**6)])
        if kind == 3:
            return rng.choice([0.0, -0.0, 1e308, 5e-324, rng.uniform(-1e6, 1e6)])
        if kind == 4:
            return self.any()
        if kind == 5:
            return self.some(lambda: self.json_value(depth - 1), 3)
        return self.json_object(depth - 1)

    def json_object(self, depth: int = 2) -> dict[str, Json]:
        """A free JSON object (keys are drawn texts too)."""
        return {self.short(): self.json_value(depth) for _ in range(self.rng.randint(0, 3))}


def _numbered(turns: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [{key: number, **turn} for number, turn in enumerate(turns, start=1)]


# -- Mind the Goal (paper 004, Appendix E) ------------------------------------------------------


def mind_the_goal(rng: Random, text: Texts) -> dict[str, Any]:
    """A Mind the Goal dialog record, every optional field of a turn sometimes present."""

    def turn() -> dict[str, Any]:
        return {"user_msg": text.said()} | text.maybe(
            {
                "response": text.any,
                "source_urls": lambda: text.some(text.short, 2),
                "source_names": lambda: text.some(text.short, 2),
                "source_snippets": lambda: text.some(text.any, 2),
                "timestamp": lambda: (
                    f"20{rng.randint(10, 39)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T"
                    f"0{rng.randint(0, 9)}:30:00{rng.choice(['', 'Z', '+02:00', '.123456'])}"
                ),
                "metadata": text.json_object,
                "is_new_goal": lambda: rng.choice([True, False, None, "yes", "no", " Yes "]),
                "quality": lambda: rng.choice(["success", "failure", None]),
                "rcof": lambda: rng.choice(["E1", "E3", "E7", None]),
            }
        )

    record = {"turns": _numbered(text.some(turn, 4, least=1), "turn_number")}
    return record | text.maybe({"metadata": text.json_object})


# -- Schema-Guided Dialogue, compact (data/sgd/README.md) and as released ------------------------


def _slot_values(text: Texts) -> dict[str, list[str]]:
    rng = text.rng
    return {rng.choice(SLOTS): text.some(text.short, 2, least=1) for _ in range(rng.randint(0, 2))}


def sgd_compact(rng: Random, text: Texts) -> dict[str, Any]:
    """A compact SGD record: alternating utterances from the user, frames in compact form."""
    pursued: dict[str, list[str]] = {}  # service -> intents the user has made active

    def user_frame() -> dict[str, Any]:
        service, intent = rng.choice(SERVICES), rng.choice(INTENTS)
        if intent != "NONE":
            pursued.setdefault(service, []).append(intent)
        sv, req = _slot_values(text), text.some(lambda: rng.choice(SLOTS), 1)
        return {"svc": service, "intent": intent, "sv": sv, "req": req}

    def system_frame() -> dict[str, Any]:
        acts = text.some(lambda: [rng.choice(ACTS), rng.choice(SLOTS), text.some(text.short, 2)], 2)
        service = rng.choice(SERVICES)
        frame = {"svc": service, "act": acts}
        if pursued.get(service) and rng.random() < 0.5:
            frame["call"] = [rng.choice(pursued[service]), _slot_values(text)]
        return frame

    count = rng.randint(1, 6)
    turns = [
        {
            "s": "U" if index % 2 == 0 else "S",
            "t": text.said() if index == 0 else text.any(),
            "f": text.some(user_frame if index % 2 == 0 else system_frame, 2),
        }
        for index in range(count)
    ]
    users = range(0, count, 2)
    return {"turns": turns} | text.maybe(
        {
            "split": lambda: rng.choice(["train", "dev", None]),
            "services": lambda: text.some(lambda: rng.choice(SERVICES), 2),
            "labels": lambda: rng.random() < 0.5,
            "goals": lambda: text.some(lambda: [rng.choice(SERVICES), rng.choice(INTENTS)], 2),
            "segments": lambda: text.some(
                lambda: [rng.choice(users), rng.choice(SERVICES), rng.choice(INTENTS)], 2
            ),
            "source": lambda: rng.choice(["head", None]),
        }
    )


def sgd_release(rng: Random, text: Texts) -> dict[str, Any]:
    """A dialogue of the SGD release (``dialogues_NNN.json``): user frames carry a state."""
    pursued: dict[str, list[str]] = {}  # service -> intents the user has made active

    def action() -> dict[str, Any]:
        values = text.some(text.short, 2)
        return {"act": rng.choice(ACTS), "slot": rng.choice(SLOTS), "values": values}

    def user_frame() -> dict[str, Any]:
        service, intent = rng.choice(SERVICES), rng.choice(INTENTS)
        if intent != "NONE":
            pursued.setdefault(service, []).append(intent)
        state = {
            "active_intent": intent,
            "requested_slots": text.some(lambda: rng.choice(SLOTS), 1),
            "slot_values": _slot_values(text),
        }
        return {"service": service, "slots": [], "actions": text.some(action, 2), "state": state}

    def system_frame() -> dict[str, Any]:
        service = rng.choice(SERVICES)
        frame: dict[str, Any] = {"service": service, "slots": [], "actions": text.some(action, 2)}
        if pursued.get(service) and rng.random() < 0.5:
            parameters = {slot: values[0] for slot, values in _slot_values(text).items()}
            frame["service_call"] = {
                "method": rng.choice(pursued[service]),
                "parameters": parameters,
            }
        if rng.random() < 0.3:
            frame["service_results"] = [{rng.choice(SLOTS): text.short()}]
        return frame

    turns = [
        {
            "speaker": "USER" if index % 2 == 0 else "SYSTEM",
            "utterance": text.said() if index == 0 else text.any(),
            "frames": text.some(user_frame if index % 2 == 0 else system_frame, 2),
        }
        for index in range(rng.randint(1, 6))
    ]
    return {"services": text.some(lambda: rng.choice(SERVICES), 2), "turns": turns}


# -- ATOD (paper 000, Listings 1-2) ----------------------------------------------------------------

STATUSES = ["open", "pending", "completed", "failed", "abandoned", "Not Mentioned"]


def _earlier(rng: Random, goal_ids: list[str]) -> list[str]:
    """At most one dependency, on an earlier goal."""
    return rng.sample(goal_ids, min(len(goal_ids), rng.randint(0, 1)))


def atod(rng: Random, text: Texts) -> dict[str, Any]:
    """An ATOD-annotated dialogue whose turns name only goals of its ``goal_list``."""
    goal_ids = [f"g{k}" for k in range(1, rng.randint(0, 3) + 1)]
    goals = [
        {"id": goal}
        | text.maybe(
            {
                "domain": lambda: rng.choice(SERVICES),
                "intent": lambda: rng.choice(INTENTS),
                "slots": lambda: text.some(lambda: rng.choice(SLOTS), 2),
                "slot_values": lambda: {rng.choice(SLOTS): text.json_value(0)},
                "dependencies": partial(_earlier, rng, goal_ids[:k]),
                "content": text.any,
                "core_content": text.short,
            }
        )
        for k, goal in enumerate(goal_ids)
    ]

    def turn(index: int) -> dict[str, Any]:
        # The first utterance is the user's: a record with no user turn has nothing to judge.
        speaker = "USER" if index == 0 else rng.choice(["USER", "SYSTEM", "agent", " user "])
        changes = [
            {"goal_id": goal, "new_status": rng.choice(STATUSES)}
            for goal in rng.sample(goal_ids, rng.randint(0, len(goal_ids)))
        ]
        statuses = {
            goal: rng.choice(STATUSES)
            for goal in rng.sample(goal_ids, rng.randint(0, len(goal_ids)))
        }
        return {
            "turn_id": index + 1,
            "speaker": speaker,
            "utterance": text.said() if index == 0 else text.any(),
            "goal_status_changes": changes,
            "all_goals": statuses,
        }

    record = {"goal_list": goals, "turns": [turn(index) for index in range(rng.randint(1, 5))]}
    return record | text.maybe(
        {
            "complexity_class": lambda: rng.choice(["medium", "complex", None]),
            "metadata": text.json_object,
        }
    )
