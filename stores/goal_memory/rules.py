"""The rules the goal memory enforces: lifecycle moves, prerequisites, an acyclic graph.

Pure functions of goals and graphs, so each rule reads on its own; :class:`GoalMemory` calls
them inside its write transactions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from todeval.evals.goal_tracking_schema import VALID_TRANSITIONS
from todeval.stores.goal_memory.records import Goal, tracked_status

if TYPE_CHECKING:  # networkx (0.16 s to import) only when a graph is built
    import networkx as nx

UNMET_PREREQUISITES = "a goal with unmet prerequisites cannot be completed"
SELF_LINK = "a goal cannot depend on itself"


def transition_refusal(goal: Goal, wanted: str, prerequisites: Sequence[Goal]) -> str | None:
    """Why ``goal`` may not move to status ``wanted``, or None if it may.

    Args:
        goal: The goal as stored; ``wanted`` differs from its status.
        wanted: The proposed status (normalised spelling).
        prerequisites: The goals ``goal`` depends on.

    Returns:
        The reason for refusing: an unknown status, a move ``VALID_TRANSITIONS`` forbids, or
        completion while a prerequisite is not completed (ATOD: dependencies prevent
        premature completion).
    """
    try:
        status = tracked_status(wanted)
    except ValueError as error:
        return str(error)
    if status not in VALID_TRANSITIONS[goal.status]:
        return f"invalid transition {goal.status} -> {status}"
    if status == "completed":
        unmet = [f"{p.id} is {p.status}" for p in prerequisites if p.status != "completed"]
        if unmet:
            return f"{UNMET_PREREQUISITES}: {', '.join(unmet)}"
    return None


def dependency_graph(
    dialogue_id: str, goals: Iterable[Goal], edges: Iterable[tuple[str, str, float]]
) -> nx.DiGraph:
    """The dependency graph G = (V, E) of one dialogue.

    Args:
        dialogue_id: Stored as the graph's ``dialogue_id`` attribute.
        goals: The nodes; each keeps ``status``, ``description``, ``domain``, ``intent`` and
            ``parent_id``.
        edges: ``(goal_id, depends_on, relation)``.

    Returns:
        A DiGraph whose edges run from a prerequisite to the goal that depends on it (with
        their ``relation`` weight), so ``nx.topological_sort`` gives an order to pursue them.
    """
    import networkx as nx

    graph = nx.DiGraph(dialogue_id=dialogue_id)
    for goal in goals:
        graph.add_node(
            goal.id,
            status=goal.status,
            description=goal.description,
            domain=goal.domain,
            intent=goal.intent,
            parent_id=goal.parent_id,
        )
    for goal_id, depends_on, relation in edges:
        graph.add_edge(depends_on, goal_id, relation=relation)
    return graph


def link_refusal(
    edges: Sequence[tuple[str, str, float]],
    goal: Goal,
    prerequisite: Goal,
    graph: Callable[[], nx.DiGraph],
) -> str | None:
    """Why ``goal`` may not gain ``prerequisite``, or None if it may.

    Args:
        edges: The dialogue's dependencies, ``(goal_id, depends_on, relation)``.
        goal: The dependent goal.
        prerequisite: The goal it would depend on.
        graph: The dialogue's current dependency graph (:func:`dependency_graph`), built only
            to name the path of a cycle (most links close none: a walk of ``edges`` tells).

    Returns:
        The reason: a self-link, a link that would close a cycle (the graph stays a DAG), or a
        completed goal gaining a prerequisite that is not completed.
    """
    if goal.id == prerequisite.id:
        return SELF_LINK
    if reaches(edges, goal.id, prerequisite.id):
        import networkx as nx

        path = " -> ".join(nx.shortest_path(graph(), goal.id, prerequisite.id))
        return f"would close a cycle: {path} -> {goal.id}"
    if goal.status == "completed" and prerequisite.status != "completed":
        return f"{goal.id} is completed but its new prerequisite {prerequisite.id} is not"
    return None


def reaches(edges: Iterable[tuple[str, str, float]], source: str, target: str) -> bool:
    """Whether the dependency graph of ``edges`` has a path from ``source`` to ``target``.

    Its edges run from a prerequisite to the goal that depends on it (:func:`dependency_graph`),
    so the walk goes from a goal to its dependents: ``nx.has_path``'s answer for goals the graph
    has.
    """
    dependents: dict[str, list[str]] = {}
    for goal_id, depends_on, _ in edges:
        dependents.setdefault(depends_on, []).append(goal_id)
    seen, frontier = {source}, [source]
    while frontier:
        if target in seen:
            return True
        frontier = [
            after for node in frontier for after in dependents.get(node, ()) if after not in seen
        ]
        seen.update(frontier)
    return target in seen
