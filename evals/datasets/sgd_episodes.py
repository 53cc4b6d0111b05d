"""Goal episodes of SGD dialogues: the material todeval's local ATOD generator composes.

An *episode* is the contiguous run of utterances of one SGD dialogue in which the user pursues
the goals of one service (``Restaurants_1``: FindRestaurants, then ReserveRestaurant), from the
user utterance that opens the first of them to the last utterance before the user turns to
another service. Its gold statuses are :func:`~evals.datasets.sgd_goals.sgd_to_atod`'s, read
utterance by utterance. Only *clean* episodes are kept, so that one can be cut out and placed
in another dialogue without leaving loose ends:

* the service's goals are active only inside the episode (no later return to them), and no
  other service's goal is active inside it;
* every goal of the episode is decided (completed or failed) by its last utterance, and no
  status of theirs changes outside it;
* it opens with a user utterance and ends with a system one, and opens either its dialogue or
  the user's answer to the system's "anything else?" (so its first words need no context);
  its last system utterance asks "anything else?" (so any goal may follow it).

A dialogue's closing exchange (the user's "that's all" and the system's GOODBYE) is cut off the
last episode and kept apart, to end composed dialogues. An episode whose transaction the system
confirms, the user agrees to and the system then reports done or failed can have that report
deferred (``deferrable``): the asynchronous tool result of ATOD §3.1.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from todeval.evals.datasets.sgd_goals import sgd_to_atod
from todeval.evals.datasets.sgd_schema import ServiceSchema, is_transactional
from todeval.evals.datasets.sgd_timeline import Timeline
from todeval.evals.goal_tracking_schema import AtodDialogue, AtodGoal, GoalStatus
from todeval.evals.schema import Dialogue

Speaker = Literal["USER", "SYSTEM"]

#: System acts whose values are the goal's own (how the system spells them back).
_SPELLING_ACTS = frozenset({"CONFIRM", "INFORM"})


@dataclass(frozen=True)
class EpisodeGoal:
    """One goal of an episode, as SGD's gold gives it.

    ``variants`` lists every surface form SGD gives a slot's value (for substitution);
    ``dependencies`` are indices of earlier goals of the episode.
    """

    intent: str
    slots: tuple[str, ...]
    slot_values: Mapping[str, str]
    variants: Mapping[str, tuple[str, ...]]
    dependencies: tuple[int, ...]
    content: str
    core_content: str
    transactional: bool
    final_status: GoalStatus


@dataclass(frozen=True)
class EpisodeUtterance:
    """One utterance with the status changes it causes (goal index in the episode -> status)."""

    speaker: Speaker
    text: str
    changes: tuple[tuple[int, GoalStatus], ...] = ()


@dataclass(frozen=True)
class Episode:
    """A clean episode (module doc).

    ``deferrable`` is the index of the system utterance reporting a transaction's outcome after
    the user agreed (the one that can arrive later); ``opens_dialogue`` says its first
    utterance needs no earlier context.
    """

    source_id: str
    service: str
    goals: tuple[EpisodeGoal, ...]
    utterances: tuple[EpisodeUtterance, ...]
    deferrable: int | None = None
    opens_dialogue: bool = False

    @property
    def intents(self) -> tuple[str, ...]:
        """Its goals' intents, in order."""
        return tuple(goal.intent for goal in self.goals)

    @property
    def defective(self) -> bool:
        """Whether one of its goals failed (a defective goal, Table 9)."""
        return any(goal.final_status == "failed" for goal in self.goals)


Closing = tuple[str, str]
"""A dialogue's closing exchange: the user's last words and the system's goodbye."""


def dialogue_episodes(
    dialogue: Dialogue, schema: Mapping[str, ServiceSchema] | None = None
) -> tuple[list[Episode], Closing | None]:
    """The clean episodes of one SGD dialogue and its closing exchange (module doc).

    Raises:
        FieldError: The dialogue's SGD frames cannot be read.
    """
    timeline = Timeline.of(dialogue)
    gold = sgd_to_atod(dialogue, schema)
    states = _states(gold)
    first = {
        goal.id: min((i for i, s in enumerate(states) if s[goal.id] != "not_mentioned"), default=-1)
        for goal in gold.goal_list
    }
    services: dict[str, list[int]] = {}
    for k, goal in enumerate(gold.goal_list):
        if first[goal.id] >= 0:
            services.setdefault(goal.domain, []).append(k)
    starts = sorted((min(first[gold.goal_list[k].id] for k in ks), s) for s, ks in services.items())
    last = len(timeline.utterances) - 1
    closing = _closing(timeline, last)
    goodbye = timeline.utterances[last].speaker == "SYSTEM" and "GOODBYE" in _acts(
        timeline.utterances[last].frames
    )
    episodes = []
    for n, (start, service) in enumerate(starts):
        end = starts[n + 1][0] - 1 if n + 1 < len(starts) else last
        if goodbye and end == last:
            end -= 2
        episode = _episode(dialogue.dialogue_id, timeline, gold, states, services[service], start,
                           end, schema)  # fmt: skip
        if episode is not None:
            episodes.append(episode)
    return episodes, closing


def _states(gold: AtodDialogue) -> list[dict[str, GoalStatus]]:
    state: dict[str, GoalStatus] = {}
    out = []
    for turn in gold.turns:
        state = state | turn.all_goals
        out.append(dict(state))
    return out


def _closing(timeline: Timeline, last: int) -> Closing | None:
    """The user's answer to "anything else?" and the system's goodbye, if the dialogue ends so."""
    if last < 2:
        return None
    final, asked = timeline.utterances[last], timeline.utterances[last - 2]
    if final.speaker != "SYSTEM" or "GOODBYE" not in _acts(final.frames):
        return None
    if asked.speaker != "SYSTEM" or "REQ_MORE" not in _acts(asked.frames):
        return None  # the user's last words answer something else (an offer, say)
    return timeline.utterances[last - 1].text, final.text


def _acts(frames: list[Mapping[str, Any]]) -> set[str]:
    return {str(act[0]) for frame in frames for act in frame.get("act", []) if act}


def _episode(
    source_id: str,
    timeline: Timeline,
    gold: AtodDialogue,
    states: list[dict[str, GoalStatus]],
    indices: list[int],
    start: int,
    end: int,
    schema: Mapping[str, ServiceSchema] | None,
) -> Episode | None:
    goals = [gold.goal_list[k] for k in indices]
    ids = [goal.id for goal in goals]
    pairs = {(goal.domain, goal.intent) for goal in goals}
    service = goals[0].domain
    utterances = timeline.utterances
    if end <= start or utterances[start].speaker != "USER" or utterances[end].speaker != "SYSTEM":
        return None
    if start and "REQ_MORE" not in _acts(utterances[start - 1].frames):
        return None  # the user takes up something the system offered: it needs that context
    if "REQ_MORE" not in _acts(utterances[end].frames):
        return None  # it ends on an open question (an offer) the next episode would ignore
    for index, active in timeline.active.items():
        inside = start <= index <= end
        if not inside and pairs & set(active):
            return None  # the user comes back to the service elsewhere
        if inside and any(pair not in pairs for pair in active):
            return None  # another service's goal is pursued inside the span
    before = states[start - 1] if start else {}
    if any(before.get(goal_id, "not_mentioned") != "not_mentioned" for goal_id in ids):
        return None
    if any(states[i][g] != states[end][g] for g in ids for i in range(end, len(states))):
        return None  # a status changes after the episode
    if any(states[end][goal_id] not in ("completed", "failed") for goal_id in ids):
        return None
    position = {goal_id: n for n, goal_id in enumerate(ids)}
    said: list[EpisodeUtterance] = []
    previous: dict[str, GoalStatus] = dict(before)
    for i in range(start, end + 1):
        changes = tuple(
            (position[g], states[i][g])
            for g in ids
            if states[i][g] != previous.get(g, "not_mentioned")
        )
        previous = states[i]
        said.append(EpisodeUtterance(utterances[i].speaker, utterances[i].text, changes))
    episode_goals = tuple(
        _goal(goal, timeline, start, end, position, states[end][goal.id], schema) for goal in goals
    )
    return Episode(
        source_id, service, episode_goals, tuple(said), _deferrable(said, episode_goals), start == 0
    )


def _goal(
    goal: AtodGoal,
    timeline: Timeline,
    start: int,
    end: int,
    position: Mapping[str, int],
    final: GoalStatus,
    schema: Mapping[str, ServiceSchema] | None,
) -> EpisodeGoal:
    pair = (goal.domain, goal.intent)
    state = timeline.state[timeline.last_active(pair)].get(goal.domain, {})
    said = {slot: list(values) for slot, values in state.items()}
    for index in range(start, end + 1):  # how the system spelled the values it confirmed
        utterance = timeline.utterances[index]
        if utterance.speaker != "SYSTEM":
            continue
        for frame in utterance.frames:
            if frame.get("svc") != goal.domain:
                continue
            for act in frame.get("act", []):
                if len(act) > 2 and act[0] in _SPELLING_ACTS and act[1] in said:
                    said[str(act[1])] += [str(v) for v in act[2]]
    return EpisodeGoal(
        intent=goal.intent,
        slots=tuple(goal.slots),
        slot_values={k: str(v) for k, v in goal.slot_values.items()},
        variants={slot: tuple(dict.fromkeys(values)) for slot, values in said.items() if values},
        dependencies=tuple(position[d] for d in goal.dependencies if d in position),
        content=goal.content,
        core_content=goal.core_content,
        transactional=is_transactional(goal.domain, goal.intent, schema),
        final_status=final,
    )


def _deferrable(said: list[EpisodeUtterance], goals: tuple[EpisodeGoal, ...]) -> int | None:
    """The system report of a confirmed transaction's outcome, right after the user's yes."""
    status: dict[int, GoalStatus] = {}
    for k, utterance in enumerate(said):
        for goal, new in utterance.changes:
            was = status.get(goal)
            if (
                k >= 3
                and utterance.speaker == "SYSTEM"
                and said[k - 1].speaker == "USER"
                and was == "pending"
                and new in ("completed", "failed")
                and goals[goal].transactional
                and len(utterance.changes) == 1
            ):
                return k
            status[goal] = new
    return None
