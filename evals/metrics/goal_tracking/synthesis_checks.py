"""Quality checks and complexity classes of synthetic ATOD dialogues (paper 000, §4, A.3-A.5).

:func:`quality_problems` is the last stage of the synthesis pipeline: a dialogue with any problem
is rejected (and counted by its first problem's check in ``summary.json``). Checks, each named by
the prefix of its message:

* ``schema``: the record is an :class:`AtodDialogue` with Listing 1's goal and metadata fields;
* ``statuses``: every turn's ``all_goals`` names every goal and follows from the previous turn
  and the turn's ``goal_status_changes``; every goal is mentioned;
* ``transition``: every status change is one of ``VALID_TRANSITIONS``;
* ``dependency``: dependencies name other known goals without cycles, and no goal completes
  before the goals it depends on;
* ``behaviour``: what the metadata claims is in the turns (asynchrony: a goal stays pending
  while another goal changes; interleaving: a goal is left for another and resumed; proactivity:
  system-initiated actions at system turns; defects: a defective goal that failed);
* ``values``: every value a goal took from another (``value_flows``) is its slot value and is
  said in the dialogue;
* ``class``: Table 9's classification of the dialogue (:func:`classify`) is its
  ``complexity_class``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from todeval.evals.goal_tracking_schema import VALID_TRANSITIONS, AtodDialogue, GoalStatus

if TYPE_CHECKING:  # networkx (0.16 s to import) only when a graph is built
    import networkx as nx

GOAL_FIELDS = (
    "id", "domain", "intent", "slots", "slot_values", "dependencies", "content", "core_content",
    "classification_method", "dependency_label", "defectiveness_label",
)  # fmt: skip
"""Listing 1's goal fields."""

METADATA_FIELDS = ("num_goals", "estimated_turns", "async_execution", "interleaving", "proactivity")
"""Listing 1's metadata fields."""


def classify(profile: Mapping[str, Any]) -> tuple[str, str]:
    """Table 9's class of a dialogue profile, and how it was decided.

    Medium: 2-8 goals, 8-35 turns, at most 2 dependencies, no proactivity, no defects;
    complex: 7+ goals, 30+ turns, 2+ dependencies, proactivity and defects. A profile that
    fits neither is resolved, as the paper says, by diversity, depth and behaviours: complex
    with proactivity or defects, four or more domains or a dependency chain of depth two.
    """
    goals, turns, deps = profile["goals"], profile["turns"], profile["dependencies"]
    proactive, defects = bool(profile["proactivity"]), bool(profile["defects"])
    if 2 <= goals <= 8 and 8 <= turns <= 35 and deps <= 2 and not proactive and not defects:
        return "medium", "pre_defined"
    if goals >= 7 and turns >= 30 and deps >= 2 and proactive and defects:
        return "complex", "pre_defined"
    diverse = profile.get("domains", 0) >= 4 or profile.get("dependency_depth", 0) >= 2
    return ("complex" if proactive or defects or diverse else "medium"), "ambiguous"


def dialogue_profile(dialogue: AtodDialogue) -> dict[str, Any]:
    """What :func:`classify` reads, measured on the dialogue itself."""
    import networkx as nx

    graph = _dependency_graph(dialogue)
    depth = nx.dag_longest_path_length(graph) if nx.is_directed_acyclic_graph(graph) else 0
    return {
        "goals": len(dialogue.goal_list),
        "turns": len(dialogue.turns),
        "dependencies": graph.number_of_edges(),
        "dependency_depth": depth,
        "domains": len({goal.domain.rsplit("_", 1)[0] for goal in dialogue.goal_list}),
        "asynchrony": _asynchronous(dialogue),
        "interleaving": _interleaved(dialogue),
        "proactivity": bool(_proactive_turns(dialogue)),
        "defects": any(getattr(goal, "defectiveness_label", False) for goal in dialogue.goal_list),
    }


def quality_problems(record: Mapping[str, Any]) -> list[str]:
    """Every problem of a synthetic record (module doc); empty when it passes."""
    try:
        dialogue = AtodDialogue.model_validate(record)
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        return [f"schema: {'.'.join(map(str, first['loc']))}: {first['msg']}"]
    problems = _schema(dialogue, record)
    problems += _statuses(dialogue)
    problems += _dependencies(dialogue)
    problems += _behaviours(dialogue)
    problems += _values(dialogue)
    if not problems:
        found, how = classify(dialogue_profile(dialogue))
        if found != dialogue.complexity_class:
            problems.append(
                f"class: Table 9 gives {found} ({how}), the dialogue says "
                f"{dialogue.complexity_class}"
            )
    return problems


def _schema(dialogue: AtodDialogue, record: Mapping[str, Any]) -> list[str]:
    """Listing 1's fields as the record spells them (the model would fill in its defaults)."""
    problems = []
    if dialogue.complexity_class not in ("medium", "complex"):
        problems.append(f"schema: complexity_class {dialogue.complexity_class!r}")
    missing = [name for name in METADATA_FIELDS if name not in dialogue.metadata]
    if missing:
        problems.append(f"schema: metadata lacks {', '.join(missing)}")
    for goal, raw in zip(dialogue.goal_list, record.get("goal_list") or [], strict=False):
        lacking = [name for name in GOAL_FIELDS if name not in raw]
        lacking += [name for name in ("domain", "intent") if name in raw and not raw[name]]
        if lacking:
            problems.append(f"schema: goal {goal.id} lacks {', '.join(lacking)}")
    return problems


def _statuses(dialogue: AtodDialogue) -> list[str]:
    ids = [goal.id for goal in dialogue.goal_list]
    state: dict[str, GoalStatus] = dict.fromkeys(ids, "not_mentioned")
    problems = []
    for turn in dialogue.turns:
        for change in turn.goal_status_changes:
            before = state[change.goal_id]
            if change.new_status != before and change.new_status not in VALID_TRANSITIONS[before]:
                problems.append(
                    f"transition: {change.goal_id} {before} -> {change.new_status} at turn "
                    f"{turn.turn_id}"
                )
            state[change.goal_id] = change.new_status
        if set(turn.all_goals) != set(ids) or turn.all_goals != state:
            problems.append(f"statuses: all_goals of turn {turn.turn_id} disagree with the changes")
            break
    silent = [goal_id for goal_id, status in state.items() if status == "not_mentioned"]
    if silent:
        problems.append(f"statuses: goals never mentioned: {', '.join(silent)}")
    return problems


def _dependency_graph(dialogue: AtodDialogue) -> nx.DiGraph:
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(goal.id for goal in dialogue.goal_list)
    for goal in dialogue.goal_list:
        graph.add_edges_from((prerequisite, goal.id) for prerequisite in goal.dependencies)
    return graph


def _dependencies(dialogue: AtodDialogue) -> list[str]:
    ids = {goal.id for goal in dialogue.goal_list}
    problems = [
        f"dependency: {goal.id} depends on unknown or itself: {d}"
        for goal in dialogue.goal_list
        for d in goal.dependencies
        if d not in ids or d == goal.id
    ]
    if problems:
        return problems
    import networkx as nx

    if not nx.is_directed_acyclic_graph(_dependency_graph(dialogue)):
        return ["dependency: the dependencies form a cycle"]
    completed_at = _completion_turns(dialogue)
    for goal in dialogue.goal_list:
        done = completed_at.get(goal.id)
        for prerequisite in goal.dependencies:
            before = completed_at.get(prerequisite)
            if done is not None and (before is None or before > done):
                problems.append(
                    f"dependency: {goal.id} completes at turn {done} before its prerequisite "
                    f"{prerequisite}"
                )
    return problems


def _completion_turns(dialogue: AtodDialogue) -> dict[str, int]:
    done: dict[str, int] = {}
    for turn in dialogue.turns:
        for change in turn.goal_status_changes:
            if change.new_status == "completed":
                done.setdefault(change.goal_id, turn.turn_id)
    return done


def _changes(dialogue: AtodDialogue) -> list[tuple[int, str, str]]:
    return [
        (turn.turn_id, change.goal_id, change.new_status)
        for turn in dialogue.turns
        for change in turn.goal_status_changes
    ]


def _asynchronous(dialogue: AtodDialogue) -> bool:
    """A goal stays pending while another goal's status changes."""
    changes = _changes(dialogue)
    for k, (turn, goal_id, status) in enumerate(changes):
        if status != "pending":
            continue
        end = next((t for t, g, _ in changes[k + 1 :] if g == goal_id), None)
        if end is not None and any(g != goal_id and turn < t < end for t, g, _ in changes):
            return True
    return False


def _interleaved(dialogue: AtodDialogue) -> bool:
    """A goal changes, another goal changes, then the first changes again."""
    changes = _changes(dialogue)
    for k, (_, goal_id, _status) in enumerate(changes):
        later = [g for _, g, _ in changes[k + 1 :]]
        if goal_id in later and any(g != goal_id for g in later[: later.index(goal_id)]):
            return True
    return False


def _proactive_turns(dialogue: AtodDialogue) -> list[int]:
    actions: Sequence[Mapping[str, Any]] = dialogue.metadata.get("proactive_actions") or []
    speakers = {turn.turn_id: turn.speaker for turn in dialogue.turns}
    return [int(a["turn_id"]) for a in actions if speakers.get(int(a["turn_id"])) == "SYSTEM"]


def _behaviours(dialogue: AtodDialogue) -> list[str]:
    profile = dialogue_profile(dialogue)
    claims = {
        "async_execution": ("asynchrony", "no goal stays pending while another changes"),
        "interleaving": ("interleaving", "no goal is left for another and resumed"),
        "proactivity": ("proactivity", "no proactive action at a system turn"),
    }
    problems = [
        f"behaviour: metadata says {name} but {why}"
        for name, (key, why) in claims.items()
        if dialogue.metadata.get(name) and not profile[key]
    ]
    final = dialogue.final_statuses()
    for goal in dialogue.goal_list:
        if getattr(goal, "defectiveness_label", False) and final[goal.id] != "failed":
            problems.append(f"behaviour: {goal.id} is labelled defective but does not fail")
    return problems


def _values(dialogue: AtodDialogue) -> list[str]:
    text = "\n".join(turn.utterance for turn in dialogue.turns).lower()
    goals = {goal.id: goal for goal in dialogue.goal_list}
    problems = []
    for flow in dialogue.metadata.get("value_flows") or []:
        goal = goals.get(str(flow.get("goal_id")))
        value = str(flow.get("value", ""))
        if goal is None or str(goal.slot_values.get(str(flow.get("slot")))) != value:
            problems.append(f"values: {flow.get('goal_id')}.{flow.get('slot')} is not {value!r}")
        elif value.lower() not in text:
            problems.append(f"values: {value!r} ({goal.id}.{flow.get('slot')}) is never said")
    return problems
