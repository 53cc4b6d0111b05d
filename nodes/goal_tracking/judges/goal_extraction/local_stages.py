"""Local judges of the goal tracker: existence check, status update, graph evolution, audit.

Paper 000 §5.2 gives each of these decisions to an LLM judge; these are transparent local
versions.

* **Existence check** (Stage 1): with a schema, a candidate matches the goal in memory with the
  same (service, intent), a live one first; without one, the most similar neighbour's cosine
  is the confidence.
* **Status update** (Stage 2): the utterance's act (:mod:`.status_cues`) applies to the focus
  goal (:mod:`.status_focus`).
* **Graph evolution** (Stage 3): a transaction depends on an earlier lookup of its service;
  other relations are cosine similarities, recorded but not prerequisites.
* **Proactive audit** (Stage 4): at the end, a live lookup the system answered is completed,
  and so is a pending transaction whose confirmation the user agreed to with no failure after.
  Other live transactions stay: moving on to other goals is no evidence of dropping them.
* **Service evidence** (:class:`ServiceEvidence`): a schema may offer one intent in several
  services (SGD's ``Hotels_1`` and ``Hotels_4`` both have ``SearchHotel``). The conversation
  often tells them apart through a categorical slot only one has ("has wifi"), so a goal's
  service is named by the tokens of each service's categorical slot names that no sibling's
  contain, once they appear. Free-text slot names describe things every sibling talks about.
  On SGD dev dialogues with a sibling service: gold alone in 340 cases, wrong in 2, no
  evidence in 555.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field

from todeval.evals.datasets.sgd_schema import ServiceSchema
from todeval.evals.goal_tracking_schema import GoalStatus
from todeval.stores.goal_memory import Goal

LIVE: tuple[GoalStatus, ...] = ("open", "pending")
"""Statuses of a goal still being worked on."""


@dataclass(frozen=True)
class Match:
    """The existence check's answer for one candidate goal."""

    goal_id: str | None
    confidence: float
    reason: str


def same_key(service: str, intent: str, goal: Goal) -> bool:
    """Whether ``goal`` is the (service, intent) pair named (case-insensitive)."""
    return bool(service and intent) and (
        (goal.domain.lower(), goal.intent.lower()) == (service.lower(), intent.lower())
    )


def check_existence(
    service: str, intent: str, neighbours: Sequence[tuple[Goal, float]], tau: float
) -> Match:
    """Match a candidate to a goal in memory, or not (confidence < ``tau`` means new)."""
    if service and intent:
        same = [goal for goal, _ in neighbours if same_key(service, intent, goal)]
        same.sort(key=lambda goal: goal.status not in LIVE)  # live goals first
        if same:
            return Match(same[0].id, 1.0, f"same service and intent as {same[0].id}")
        return Match(None, 0.0, "no goal with this service and intent")
    if not neighbours:
        return Match(None, 0.0, "memory is empty")
    goal, similarity = neighbours[0]
    if similarity >= tau:
        return Match(goal.id, similarity, f"cosine {similarity:.2f} to {goal.id} >= tau {tau}")
    return Match(None, similarity, f"nearest goal {goal.id} at cosine {similarity:.2f} < {tau}")


def evolve(
    new: Goal, others: Sequence[tuple[Goal, float]], *, delta: float, is_lookup: bool | None
) -> list[tuple[str, float, bool]]:
    """Links of a new goal: ``(other goal id, relation, new depends on it)`` with relation >= delta.

    Args:
        new: The goal just inserted.
        others: Its neighbours in memory with their cosine similarity.
        delta: The relation threshold.
        is_lookup: Whether ``new`` is a lookup (None without a schema): a lookup depends on
            nothing; a transaction depends on an earlier lookup of its service.
    """
    links = []
    for other, similarity in others:
        if other.id == new.id:
            continue
        prerequisite = (
            is_lookup is False
            and bool(new.domain)
            and other.domain == new.domain
            and other.intent != new.intent
            and other.created_turn < new.created_turn
        )
        relation = 1.0 if prerequisite else similarity
        if relation >= delta:
            links.append((other.id, round(float(relation), 4), prerequisite))
    return links


def final_audit(
    goals: Sequence[Goal],
    *,
    is_lookup: Callable[[Goal], bool],
    answered: Callable[[Goal], bool],
    affirmed: Callable[[Goal], bool] | None = None,
) -> list[tuple[str, GoalStatus, str]]:
    """``(goal id, new status, evidence)`` for the live goals at the end of a dialogue.

    Args:
        goals: The dialogue's goals.
        is_lookup: Whether a goal is a search rather than a transaction.
        answered: Whether the system replied to the goal after it was raised without failing.
        affirmed: Whether the user agreed to the confirmation a pending transaction waits on,
            and no failure was reported after (ATOD's audit example: Pending -> Completed).
    """
    decisions: list[tuple[str, GoalStatus, str]] = []
    for goal in goals:
        if goal.status not in LIVE:
            continue
        if is_lookup(goal):
            if answered(goal):
                decisions.append((goal.id, "completed", "the system answered this search"))
        elif affirmed is not None and affirmed(goal):
            decisions.append(
                (goal.id, "completed", "the user confirmed it and no failure was reported")
            )
    return decisions


#: Slot-name tokens shorter than this carry no meaning of their own ("of", "to", "has").
MIN_TOKEN_LENGTH = 4


@dataclass(frozen=True)
class ServiceEvidence:
    """Sibling services and the words that tell each apart, built from a schema.

    Attributes:
        siblings: Service -> the other services that share an intent name with it.
        patterns: Service -> a regex of its distinctive words (absent when it has none).
        intents: Service -> its intent names.
    """

    siblings: Mapping[str, frozenset[str]]
    patterns: Mapping[str, re.Pattern[str]]
    intents: Mapping[str, frozenset[str]]
    _rivals: dict[tuple[str, str], tuple[str, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    @classmethod
    def build(cls, schema: Mapping[str, ServiceSchema]) -> ServiceEvidence:
        """Find the siblings and each service's distinctive categorical slot words."""
        intents = {
            name: frozenset(i.name for i in service.intents) for name, service in schema.items()
        }
        siblings = {
            name: frozenset(
                other for other in schema if other != name and intents[name] & intents[other]
            )
            for name in schema
        }
        patterns: dict[str, re.Pattern[str]] = {}
        for name, others in siblings.items():
            if not others:
                continue
            theirs = {
                token
                for other in others
                for slot in schema[other].slots
                for token in slot.name.lower().split("_")
            }
            mine = {
                token
                for slot in schema[name].slots
                if slot.is_categorical
                for token in slot.name.lower().split("_")
                if len(token) >= MIN_TOKEN_LENGTH
            }
            words = sorted(mine - theirs)
            if words:
                patterns[name] = re.compile(r"\b(" + "|".join(map(re.escape, words)) + ")", re.I)
        return cls(siblings, patterns, intents)

    def preferred(self, service: str, intent: str, text: str) -> str | None:
        """The one service among ``service`` and its siblings that ``text`` gives evidence of.

        Only siblings that offer ``intent`` compete. None when no sibling offers it, or when
        none or several are evidenced.
        """
        return self.preferred_among(service, intent, self.evidenced(text))

    def evidenced(self, text: str) -> frozenset[str]:
        """The services whose distinctive words ``text`` says.

        A word never spans two texts, so the services a dialogue evidences are the union of
        its utterances' (each read once), the same as of the texts joined with spaces.
        """
        return frozenset(name for name, pattern in self.patterns.items() if pattern.search(text))

    def preferred_among(self, service: str, intent: str, evidenced: Collection[str]) -> str | None:
        """:meth:`preferred`, given the services the text evidences (:meth:`evidenced`)."""
        group = self.rivals(service, intent)
        if not group:
            return None
        found = [name for name in (service, *group) if name in evidenced]
        return found[0] if len(found) == 1 else None

    def rivals(self, service: str, intent: str) -> tuple[str, ...]:
        """The siblings of ``service`` that offer ``intent``: with none, no evidence matters.

        Sorted once per pair (the tracker asks for every goal at every utterance).
        """
        key = (service, intent)
        found = self._rivals.get(key)
        if found is None:
            siblings = sorted(self.siblings.get(service, ()))
            found = tuple(name for name in siblings if intent in self.intents[name])
            self._rivals[key] = found
        return found
