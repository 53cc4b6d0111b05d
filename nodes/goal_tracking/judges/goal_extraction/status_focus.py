"""Which goal a status cue applies to: the focus goal (ATOD §5.2, Stages 2-3, local judge).

Several goals may be live at once, so "your table is booked" must complete the restaurant
goal, not the latest one touched. The focus is read from the utterance:

* **Kind.** Transaction cues go to transactional goals, results to lookups; a failure to a live
  transaction first, else to a live search that found nothing.
* **Service.** Among the dialogue's goals' services, the one whose transactional intents the
  utterance is closest to (MiniLM, :class:`SchemaIndex` texts), with bonuses for a live goal of
  the right kind (more if pending) and for the service touched last. Services no goal belongs
  to are not considered (on SGD dev, naming one from the utterance alone is too often wrong).
  For "never mind the hotel", a service's domain words decide outright.
* **Goal.** The service's live goal of the right kind; else one left or failed (revived); else,
  for a transaction the system confirms or reports done (act probability at least
  :data:`NEW_GOAL_CONFIDENCE`), a new goal for the closest transactional intent (the system's
  own words are evidence of a transaction the extractor missed).

Without a schema the focus is the goal the utterance named, else the live goal touched last.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from todeval.nodes.goal_tracking.judges.goal_extraction.local_stages import LIVE
from todeval.nodes.goal_tracking.judges.goal_extraction.schema_index import SchemaIndex, words
from todeval.nodes.goal_tracking.judges.goal_extraction.status_cues import StatusCue
from todeval.stores.goal_memory import Goal

REVIVABLE = ("failed", "abandoned")

#: Added to a service's similarity when it has a live goal the cue can apply to.
LIVE_BONUS = 0.1
#: Added again when that goal is pending: the system asked to confirm it, and now reports.
PENDING_BONUS = 0.15
#: Added to the similarity of the service whose goal was touched last.
RECENT_BONUS = 0.05
#: The least probability of the system's act for inserting a goal memory does not hold.
NEW_GOAL_CONFIDENCE = 0.9

Similarity = Callable[[str, Sequence[tuple[str, str]]], list[float]]
"""``(text, [(service, intent)]) -> [similarity]``: how close the text is to each intent."""


@dataclass(frozen=True)
class Focus:
    """Where a cue lands: existing ``goals``, or a new goal ``(service, intent)`` to insert.

    Several goals for "never mind the hotel"; ``revive`` puts failed or abandoned ones back to
    ``open`` first.
    """

    goals: tuple[Goal, ...] = ()
    service: str = ""
    intent: str = ""
    revive: bool = False
    reason: str = ""


@dataclass(frozen=True)
class SchemaView:
    """What the focus needs from the schema: intent kinds, texts, similarity."""

    index: SchemaIndex
    similarity: Similarity

    def is_lookup(self, service: str, intent: str) -> bool | None:
        """Whether ``(service, intent)`` is a lookup; None if the schema does not have it."""
        return self._lookups.get((service, intent))

    @functools.cached_property
    def _lookups(self) -> dict[tuple[str, str], bool]:
        """Each pair's :meth:`is_lookup` (the focus asks for every goal at every system cue).

        The first row of a pair, as ``pairs.index`` finds it.
        """
        kinds: dict[tuple[str, str], bool] = {}
        for pair, intent in zip(self.index.pairs, self.index.intents, strict=True):
            kinds.setdefault(pair, not intent.is_transactional)
        return kinds

    @property
    def services(self) -> list[str]:
        """The schema's services, in schema order."""
        return list(dict.fromkeys(service for service, _ in self.index.pairs))

    def transactions(self, service: str) -> list[tuple[str, str]]:
        """The transactional intents of ``service`` (a new list)."""
        return list(self._transactions.get(service, ()))

    @functools.cached_property
    def _transactions(self) -> dict[str, tuple[tuple[str, str], ...]]:
        """Each service's transactional intents, in schema order (made once)."""
        found: dict[str, list[tuple[str, str]]] = {}
        for pair, intent in zip(self.index.pairs, self.index.intents, strict=True):
            if intent.is_transactional:
                found.setdefault(pair[0], []).append(pair)
        return {service: tuple(pairs) for service, pairs in found.items()}

    def mentions(self, text: str, service: str) -> bool:
        """Whether ``text`` names ``service``'s domain ("the hotel" for ``Hotels_4``)."""
        said = words(text)
        rows = [i for i, pair in enumerate(self.index.pairs) if pair[0] == service]
        return bool(rows) and bool(said & self.index.domain_words[rows[0]])


def focus(
    cue: StatusCue,
    goals: Sequence[Goal],
    text: str,
    named: Sequence[str],
    schema: SchemaView | None,
) -> Focus | None:
    """The goal(s) ``cue`` applies to, or a new goal to insert; None when nothing fits."""
    if schema is None or not any(goal.domain and goal.intent for goal in goals):
        chosen = _named_or_latest(goals, named)
        return Focus((chosen,), reason="named, else the live goal touched last") if chosen else None
    if cue.act in ("abandon", "defer"):
        return _user_focus(goals, text, named, schema)
    return _system_focus(cue, goals, text, schema)


def _named_or_latest(goals: Sequence[Goal], named: Sequence[str]) -> Goal | None:
    by_id = {goal.id: goal for goal in goals}
    for goal_id in named:
        if goal_id in by_id and by_id[goal_id].status in LIVE:
            return by_id[goal_id]
    live = [goal for goal in goals if goal.status in LIVE]
    return max(live, key=lambda goal: (goal.updated_turn, goal.id), default=None)


def _user_focus(
    goals: Sequence[Goal], text: str, named: Sequence[str], schema: SchemaView
) -> Focus | None:
    """The user's words: the live goals of the service they name, else named or latest."""
    said = [service for service in schema.services if schema.mentions(text, service)]
    if said:  # "never mind the hotel": the hotel's live goals, and nothing else
        chosen = tuple(goal for goal in goals if goal.status in LIVE and goal.domain in said)
        return Focus(chosen, reason=f"the user names {', '.join(said)}") if chosen else None
    goal = _named_or_latest(goals, named)
    return Focus((goal,), reason="named, else the live goal touched last") if goal else None


def _system_focus(
    cue: StatusCue, goals: Sequence[Goal], text: str, schema: SchemaView
) -> Focus | None:
    """The focus of a system cue: by kind, then service, then goal (module doc)."""
    fitting = [goal for goal in goals if _kind_fits(cue, goal, schema)]
    live = [goal for goal in fitting if goal.status in LIVE]
    if cue.act == "results":  # results concern a live search only
        if len(live) <= 1:
            return Focus((live[0],), reason="the live search") if live else None
        return _by_similarity(live, text, schema)
    known = list(dict.fromkeys(goal.domain for goal in goals if goal.domain))
    options = [pair for service in known for pair in schema.transactions(service)]
    options += [(g.domain, g.intent) for g in live if (g.domain, g.intent) not in options]
    if not options:
        return None
    similarity = dict(zip(options, schema.similarity(text, options), strict=True))
    latest = max(goals, key=lambda goal: (goal.updated_turn, goal.id)).domain if goals else ""
    by_service: dict[str, float] = {}
    for (service, _), value in similarity.items():
        value += LIVE_BONUS * any(goal.domain == service for goal in live)
        value += PENDING_BONUS * any(g.domain == service and g.status == "pending" for g in live)
        value += RECENT_BONUS * (service == latest)
        by_service[service] = max(by_service.get(service, -1.0), value)
    service = max(by_service, key=lambda name: (by_service[name], name == latest))
    mine = [goal for goal in fitting if goal.domain == service]

    def closest(candidates: list[Goal]) -> Goal:
        return max(candidates, key=lambda g: (similarity.get(_key(g), 0.0), g.updated_turn))

    live_mine = [goal for goal in mine if goal.status in LIVE]
    if cue.act == "failure":  # only a live goal fails, a transaction before a search
        transactions = [g for g in live_mine if schema.is_lookup(*_key(g)) is not True]
        chosen = transactions or live_mine
        return Focus((closest(chosen),), reason=f"{service}: its live goal") if chosen else None
    if live_mine:
        return Focus((closest(live_mine),), reason=f"{service}: its live goal")
    revivable = [goal for goal in mine if goal.status in REVIVABLE]
    if revivable:
        return Focus((closest(revivable),), revive=True, reason=f"{service}: the user came back")
    done = any(g.status == "completed" and schema.is_lookup(*_key(g)) is False for g in mine)
    intents = schema.transactions(service)
    if done or not intents or cue.confidence < NEW_GOAL_CONFIDENCE:
        return None  # the service's transaction is done already, or the act is unsure
    new = max(intents, key=lambda pair: similarity.get(pair, 0.0))
    return Focus(service=new[0], intent=new[1], reason=f"the system acts on {new[1]} of {service}")


def _kind_fits(cue: StatusCue, goal: Goal, schema: SchemaView) -> bool:
    """Whether the cue can apply to the goal: results to searches, success to transactions."""
    lookup = schema.is_lookup(goal.domain, goal.intent)
    if cue.act == "results":
        return lookup is not False
    return cue.act == "failure" or lookup is not True


def _by_similarity(goals: Sequence[Goal], text: str, schema: SchemaView) -> Focus:
    pairs = [(goal.domain, goal.intent) for goal in goals]
    scores = schema.similarity(text, pairs)
    latest = max(goal.updated_turn for goal in goals)
    best = max(
        zip(goals, scores, strict=True),
        key=lambda item: (item[1] + RECENT_BONUS * (item[0].updated_turn == latest), item[0].id),
    )[0]
    return Focus((best,), reason=f"the live search closest to the utterance: {best.id}")


def _key(goal: Goal) -> tuple[str, str]:
    return goal.domain, goal.intent
