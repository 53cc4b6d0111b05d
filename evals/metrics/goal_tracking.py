"""Goal-tracking metrics (ATOD, paper 000, Sections 6-8): dGCR, NTC, detection, status, cost.

A tracker's output for one dialogue is its goal memory (D_sym): ``goals``, each with
``goal_id``, ``service``, ``intent``, ``status``, ``status_history`` (``{"turn", "status"}``)
and ``dependencies`` (ids of its own goals); ``turns``, its goal states after each utterance
(``{"turn", "goal_states": {goal_id: status}}``); and per-turn ``costs``. Turns are 1-based
utterance indices, user and system utterances alike, the same as the gold ``turn_id``.

Definitional choices, all taken where the paper leaves room:

- A gold goal exists for detection only once mentioned: its gold status at that point is not
  ``not_mentioned``. We read the paper's "active goals" this way, so completed, failed and
  abandoned goals stay in the set, as they stay in memory.
- Predicted and gold goals are paired one-to-one by :func:`match_goals`. Detection precision is
  pairs / predicted goals, recall ("coverage of correctly identified active goals", Section 7)
  pairs / gold goals, and F1 = 2 pairs / (predicted + gold). So F1 is 0, not ``None``, when one
  side is empty and the other is not, and ``None`` only when both are empty.
- Status tracking accuracy is over the matched pairs ("among detected goals").
- Corpus figures pool counts over dialogues (goals, pairs, queries, turns), so a dialogue weighs
  by what it contains; the per-dialogue figures are listed too, with their plain means under
  ``macro``, for per-dialogue averages and correlations (Tables 3-5).

Nothing is made up: a figure with nothing to count is ``None``. Rates in reports and curves are
rounded to 4 decimals; the scalar metric functions return them unrounded.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypedDict

from evals.goal_tracking_schema import (
    DECIDED_STATUSES,
    AtodDialogue,
    AtodGoal,
    AtodTurn,
    normalise_status,
)

GoalRecord = Mapping[str, Any]
"""A predicted goal, turn record, cost record or memory query, as the data contract spells it."""

Pair = tuple[str, str]
"""A match: ``(predicted goal id, gold goal id)``."""

GoalKey = Callable[[GoalRecord | AtodGoal], Hashable | None]
Similarity = Callable[[GoalRecord, AtodGoal], float]
PairsAt = Callable[[int], Sequence[Pair]] | Mapping[int, Sequence[Pair]]

NOT_MENTIONED = "not_mentioned"


class DetectionScores(TypedDict):
    """Goal detection precision, recall and F1 with their counts."""

    precision: float | None
    recall: float | None
    f1: float | None
    tp: int
    n_pred: int
    n_gold: int


def dependency_aware_goal_completion_rate(
    statuses: Mapping[str, str | None], dependencies: Mapping[str, Iterable[str]] | None = None
) -> float | None:
    """dGCR: completed goals over decided goals whose prerequisites are met (Section 6.1).

    U is the set of goals whose prerequisites are all ``completed``; U_dec its goals whose own
    status is ``completed`` or ``failed``; dGCR = |completed in U| / |U_dec|. A goal with an
    unmet prerequisite is left out whatever its own status: usually it is not decided anyway
    (open or pending, waiting), and when it is, a ``failed`` caused by its prerequisite is the
    dependency-locked case the paper removes, and a ``completed`` is premature and not
    rewarded. A prerequisite id missing from ``statuses`` is not known to be completed, so it
    blocks; a goal listed as its own prerequisite is ignored. Statuses are compared case-blind.

    Args:
        statuses: Final status per goal id.
        dependencies: Prerequisite ids per goal id; ``None`` when no goal has any.

    Returns:
        The rate in [0, 1]; ``None`` when no unblocked goal is decided.
    """
    completed, decided, _ = _dgcr_counts(statuses, dependencies)
    return completed / decided if decided else None


dgcr = dependency_aware_goal_completion_rate


def turns_to_completion(goals: Iterable[GoalRecord]) -> float | None:
    """NTC: mean turns from initiation to completion over completed goals (Section 6.1).

    See :func:`turns_to_completion_per_goal` for how each goal's figure is read.

    Returns:
        The mean in utterances; ``None`` when no goal was completed.
    """
    spans = turns_to_completion_per_goal(goals)
    return sum(spans) / len(spans) if spans else None


def turns_to_completion_per_goal(goals: Iterable[GoalRecord]) -> list[int]:
    """Completion turn minus initiation turn of each completed goal, from ``status_history``.

    Initiation is the first entry whose status is not ``not_mentioned``, completion the first
    ``completed`` entry (entries are sorted by turn first). A goal raised and completed in one
    utterance counts 0; a user request answered by the next system utterance counts 1. Goals
    without a ``completed`` entry are left out, whatever their ``status`` says.
    """
    spans = []
    for goal in goals:
        history = sorted(
            (
                (int(entry["turn"]), _status(entry["status"]))
                for entry in goal.get("status_history") or []
            ),
            key=lambda entry: entry[0],
        )
        started = next((turn for turn, status in history if _mentioned(status)), None)
        completed = next((turn for turn, status in history if status == "completed"), None)
        if started is not None and completed is not None:
            spans.append(completed - started)
    return spans


def goal_key(goal: GoalRecord | AtodGoal) -> Hashable | None:
    """``(service or domain, intent)`` lower-cased and stripped; ``None`` if either is empty."""
    raw: tuple[object, object]
    if isinstance(goal, AtodGoal):
        raw = (goal.domain, goal.intent)
    else:
        raw = (goal.get("service") or goal.get("domain"), goal.get("intent"))
    service, intent = (str(part or "").strip().lower() for part in raw)
    return (service, intent) if service and intent else None


def match_goals(
    predicted: Sequence[GoalRecord],
    gold: AtodDialogue,
    *,
    turn: int | None = None,
    key: GoalKey | None = goal_key,
    similar: Similarity | None = None,
    threshold: float = 0.5,
) -> list[Pair]:
    """Pair predicted goals with the gold goals mentioned by ``turn``, one-to-one.

    Gold goals whose status after utterance ``turn`` is ``not_mentioned`` (or never set) are
    left out. Pass only the predicted goals the tracker held at that point. Both sides are
    ordered by first mention (the first non-``not_mentioned`` turn of ``status_history`` for
    predictions; list order breaks ties).

    1. By key: a goal with a key pairs with the first free goal of the other side with an equal
       key, so two hotel bookings pair in the order they came up. Goals whose keys differ never
       pair, not even by similarity.
    2. By similarity, if ``similar`` is given, among the goals still free where either side has
       no key (all of them with ``key=None``): the pairs scoring at least ``threshold`` are taken
       greedily, highest score first (ties in gold then prediction order), each goal once.
       Greedy, not optimal: a pair is never given up for a better total.

    Args:
        predicted: The tracker's goals (``goal_id``, ``service``, ``intent``, ...).
        gold: The annotated dialogue.
        turn: The utterance after which to match; ``None`` for the end of the dialogue.
        key: Goal -> hashable key or ``None``; ``None`` to match by similarity alone.
        similar: ``similar(predicted_goal, gold_goal) -> float``.
        threshold: The least similarity that pairs two goals.

    Returns:
        ``(predicted id, gold id)`` pairs.

    Raises:
        ValueError: Two predicted goals share an id, or ``turn`` is outside the dialogue.
    """
    ids = [str(goal["goal_id"]) for goal in predicted]
    if len(set(ids)) != len(ids):
        raise ValueError(f"predicted goal ids must be unique, got {ids}")
    state = gold_statuses_at(gold.turns, turn)
    first = _first_mentions(gold.turns)
    listed = {goal.id for goal in gold.goal_list}
    unlisted = [AtodGoal(id=goal_id) for goal_id in state if goal_id not in listed]
    golds = sorted(
        (goal for goal in [*gold.goal_list, *unlisted] if _mentioned(state.get(goal.id))),
        key=lambda goal: first[goal.id],
    )
    preds = sorted(range(len(predicted)), key=lambda i: (_first_turn(predicted[i]), i))
    pairs: list[Pair] = []
    free = {goal.id for goal in golds}
    if key is not None:
        queues: dict[Hashable, list[str]] = defaultdict(list)
        for goal in golds:
            gold_key = key(goal)
            if gold_key is not None:
                queues[gold_key].append(goal.id)
        for i in preds:
            pred_key = key(predicted[i])
            if pred_key is not None and queues.get(pred_key):
                gold_id = queues[pred_key].pop(0)
                pairs.append((ids[i], gold_id))
                free.discard(gold_id)
    if similar is not None:
        taken = {pred_id for pred_id, _ in pairs}
        scored = [
            (similar(predicted[i], goal), g, i)
            for g, goal in enumerate(golds)
            for i in preds
            if goal.id in free
            and ids[i] not in taken
            and (key is None or key(goal) is None or key(predicted[i]) is None)
        ]
        for score, g, i in sorted(scored, key=lambda item: (-item[0], item[1], item[2])):
            if score >= threshold and golds[g].id in free and ids[i] not in taken:
                pairs.append((ids[i], golds[g].id))
                free.discard(golds[g].id)
                taken.add(ids[i])
    return pairs


def goal_detection_prf(pairs: Sequence[Pair], n_pred: int, n_gold: int) -> DetectionScores:
    """Goal detection precision, recall and F1 from matched pairs (Table 3, Section 7).

    Args:
        pairs: One-to-one ``(predicted id, gold id)`` matches.
        n_pred: Predicted goals.
        n_gold: Gold goals mentioned so far.

    Returns:
        precision = pairs / n_pred (``None`` if 0), recall = pairs / n_gold (``None`` if 0), and
        F1 = 2 pairs / (n_pred + n_gold) (``None`` only if both are 0), unrounded.

    Raises:
        ValueError: An id appears in two pairs, or there are more pairs than goals on a side.
    """
    _check_one_to_one(pairs)
    if len(pairs) > min(n_pred, n_gold):
        raise ValueError(f"{len(pairs)} pairs for {n_pred} predicted and {n_gold} gold goals")
    return _detection(len(pairs), n_pred, n_gold)


def status_tracking_accuracy(
    pairs: Sequence[Pair], pred_status: Mapping[str, str], gold_status: Mapping[str, str]
) -> float | None:
    """Share of matched goals whose predicted status equals the gold one (case-blind).

    Returns:
        The share in [0, 1]; ``None`` when nothing is matched.

    Raises:
        ValueError: A pair names a goal missing from its status map.
    """
    return _ratio(_status_hits(pairs, pred_status, gold_status), len(pairs))


def gold_statuses_at(turns: Sequence[AtodTurn], turn: int | None = None) -> dict[str, str]:
    """Each gold goal's status after utterance ``turn`` (``None``: the last), as annotated.

    Statuses accumulate over ``all_goals`` and then ``goal_status_changes`` of each utterance,
    as in :meth:`AtodDialogue.final_statuses`; goals never named are absent.

    Raises:
        ValueError: ``turn`` is not in 1..len(turns).
    """
    last = len(turns) if turn is None else turn
    if not 1 <= last <= len(turns):
        raise ValueError(f"turn must be in 1..{len(turns)}, got {turn}")
    return _gold_timeline(turns[:last])[-1]


def gold_goal_records(dialogue: AtodDialogue) -> list[dict[str, Any]]:
    """The gold goals of ``goal_list`` in the tracker's record shape, for dGCR and NTC on gold.

    ``status_history`` gets an entry at each utterance where the goal's gold status changes.
    """
    history: dict[str, list[dict[str, Any]]] = defaultdict(list)
    previous: dict[str, str] = {}
    for utterance, state in zip(dialogue.turns, _gold_timeline(dialogue.turns), strict=True):
        for goal_id, status in state.items():
            if status != previous.get(goal_id, NOT_MENTIONED):
                history[goal_id].append({"turn": utterance.turn_id, "status": status})
        previous = state
    final = dialogue.final_statuses()
    return [
        {
            "goal_id": goal.id,
            "service": goal.domain,
            "intent": goal.intent,
            "description": goal.content,
            "slots": dict(goal.slot_values),
            "status": final[goal.id],
            "status_history": history[goal.id],
            "dependencies": list(goal.dependencies),
        }
        for goal in dialogue.goal_list
    ]


def progress_curve(
    pred_turn_states: Sequence[GoalRecord],
    gold_turns: Sequence[AtodTurn],
    pairs_at: PairsAt,
    bins: int = 10,
) -> list[dict[str, Any]]:
    """Detection F1 and status accuracy against normalised dialogue progress (Fig. 3).

    For p = k / bins (k = 1..bins) the state after utterance t = ceil(p * T) is scored, T being
    the number of gold utterances, in integer arithmetic: 9/11 of 77 utterances is 63, where the
    float ``ceil(9 / 11 * 77)`` gives 64 (and ``ceil(3 * 0.1 * 10)`` gives 4).
    The tracker's state at t is the ``goal_states`` of its last record at or before t (a turn
    without a record keeps the previous state; none yet is an empty memory); gold goals count
    once mentioned. Pairs naming a goal absent at t on either side are ignored, so a matching
    of the whole dialogue may be passed for every t, though re-matching at t
    (:func:`match_goals` with ``turn=t``) is what :func:`goal_tracking_report` does.

    Args:
        pred_turn_states: The tracker's ``{"turn", "goal_states"}`` records.
        gold_turns: The gold utterances.
        pairs_at: Utterance index -> pairs, as a function or a mapping.
        bins: Number of progress points.

    Returns:
        Per point: ``progress``, ``turn``, ``detection_f1``, ``status_accuracy`` (rounded) and
        the counts ``n_gold``, ``n_pred``, ``n_matched``, ``n_status_correct`` that
        :func:`pool_progress_curves` adds up.

    Raises:
        ValueError: ``bins`` is below 1, there are no gold utterances, or pairs at a point are
            not one-to-one.
    """
    if bins < 1 or not gold_turns:
        raise ValueError(f"need bins >= 1 and gold utterances, got {bins} and {len(gold_turns)}")
    points = []
    for k in range(1, bins + 1):
        turn = -(-k * len(gold_turns) // bins)
        pred = predicted_states_at(pred_turn_states, turn)
        gold = {g: s for g, s in gold_statuses_at(gold_turns, turn).items() if _mentioned(s)}
        raw = pairs_at[turn] if isinstance(pairs_at, Mapping) else pairs_at(turn)
        pairs = [(p, g) for p, g in raw if p in pred and g in gold]
        _check_one_to_one(pairs)
        counts = {
            "n_gold": len(gold),
            "n_pred": len(pred),
            "n_matched": len(pairs),
            "n_status_correct": _status_hits(pairs, pred, gold),
        }
        points.append({"progress": round(k / bins, 4), "turn": turn} | _curve_point(counts))
    return points


def pool_progress_curves(curves: Sequence[Sequence[Mapping[str, Any]]]) -> list[dict[str, Any]]:
    """A corpus curve: counts summed over dialogues point by point, then rates recomputed.

    Pooling, not averaging the dialogues' ratios: a point's F1 is 2 sum(matched) / (sum(pred) +
    sum(gold)) and its accuracy sum(correct) / sum(matched), so a dialogue weighs by its goals,
    and one with no goal yet at a point adds nothing there (an average would have to drop its
    ``None``). ``n_dialogues`` counts every curve pooled.

    Returns:
        Per point: ``progress``, ``detection_f1``, ``status_accuracy``, ``n_gold``, ``n_pred``,
        ``n_matched``, ``n_status_correct`` and ``n_dialogues``; empty for no curves.

    Raises:
        ValueError: The curves have different progress points.
    """
    grids = {tuple(point["progress"] for point in curve) for curve in curves}
    if len(grids) > 1:
        raise ValueError("every curve must have the same progress points (same bins)")
    pooled = []
    for index, progress in enumerate(next(iter(grids), ())):
        counts = {
            name: sum(int(curve[index][name]) for curve in curves)
            for name in ("n_gold", "n_pred", "n_matched", "n_status_correct")
        }
        point = {"progress": progress} | _curve_point(counts) | {"n_dialogues": len(curves)}
        pooled.append(point)
    return pooled


def predicted_states_at(records: Sequence[GoalRecord], turn: int) -> dict[str, str]:
    """The tracker's goal states after utterance ``turn``: its last record at or before it.

    Statuses are lower-cased; ``not_mentioned`` entries are dropped (the memory holds mentioned
    goals only). No record yet gives an empty state.
    """
    earlier = [record for record in records if int(record["turn"]) <= turn]
    if not earlier:
        return {}
    latest = max(earlier, key=lambda record: int(record["turn"]))
    states = {str(g): _status(s) for g, s in (latest.get("goal_states") or {}).items()}
    return {goal_id: str(status) for goal_id, status in states.items() if _mentioned(status)}


def memory_recall_accuracy(queries: Iterable[GoalRecord]) -> float | None:
    """Memory Recall Accuracy: the share of memory lookups that returned the right goal (6.2).

    The paper's "proportion of retrieval queries whose outputs match the ground-truth memory
    state": a query is the tracker's existence check for an utterance (Stage 1), its output the
    memory entry it retrieved (``retrieved``, mapped to the gold goal that entry matches, or
    ``None`` when it retrieved nothing and inserted a new goal), and the ground truth the gold
    goals the utterance concerns that memory should already hold (``expected``; an empty set
    for an utterance that raises only new goals). The output matches when it is one of the
    expected goals, or nothing when nothing is expected. Only the goal's identity is checked;
    its statuses are scored by status tracking accuracy. Queries with ``expected`` ``None``
    have no ground truth and are skipped. A retrieved entry matching no gold goal must be given
    as a value that is no gold id (not ``None``, which means nothing was retrieved). A string
    ``expected`` is one id.

    Returns:
        The share in [0, 1]; ``None`` when no query has an expectation.
    """
    correct, judged = _recall_counts(queries)
    return _ratio(correct, judged)


def proactivity_effectiveness(verdicts: Sequence[bool | None] | None = None) -> dict[str, Any]:
    """Proactivity Effectiveness: the share of proactive actions judged apt and useful (6.2).

    A proactive action is a goal or status change the tracker made without an explicit user
    prompt; whether it was contextually appropriate and beneficial takes an LLM judge, so
    without its verdicts there is no figure.

    Args:
        verdicts: One per proactive action: ``True`` appropriate and beneficial, ``False`` not,
            ``None`` no verdict; ``None`` when no judge ran.

    Returns:
        ``{"value", "reason", "n_actions", "n_judged"}``: ``value`` rounded, or ``None`` with
        the ``reason``.

    Raises:
        ValueError: A verdict is neither a bool nor ``None``.
    """
    if verdicts is None:
        return {
            "value": None,
            "reason": "needs LLM-judge verdicts on the proactive actions (goal or status "
            "changes made without an explicit user prompt); none were given",
            "n_actions": 0,
            "n_judged": 0,
        }
    if any(v is not None and not isinstance(v, bool) for v in verdicts):
        raise ValueError(f"verdicts must be True, False or None, got {list(verdicts)}")
    judged = [v for v in verdicts if v is not None]
    reason = None
    if not verdicts:
        reason = "no proactive action to judge"
    elif not judged:
        reason = f"the judge gave no verdict on any of the {len(verdicts)} proactive actions"
    return {
        "value": _round(_ratio(sum(judged), len(judged))),
        "reason": reason,
        "n_actions": len(verdicts),
        "n_judged": len(judged),
    }


def cost_report(records: Sequence[GoalRecord]) -> dict[str, Any]:
    """Per-turn cost of tracking (Section 8.2, Fig. 4): latency, LLM calls and tokens.

    Each figure is over the records that have its field (``None`` or missing is skipped).
    Percentiles interpolate linearly between closest ranks (NumPy's default, Hyndman-Fan type
    7): the p50 of 100, 200, 300, 400 ms is 250.

    Returns:
        ``n_turns``; ``latency_ms_p50``, ``latency_ms_p95``, ``latency_ms_mean``;
        ``llm_calls_per_turn``, ``prompt_tokens_per_turn``, ``completion_tokens_per_turn``
        (means); ``prompt_tokens_by_turn``: utterance index -> mean prompt tokens of the
        records at that index, so turn 10 and turn 50 can be compared. Rounded; ``None`` over
        nothing.
    """
    by_turn: dict[int, list[float]] = defaultdict(list)
    for record in records:
        if record.get("prompt_tokens") is not None:
            by_turn[int(record["turn"])].append(float(record["prompt_tokens"]))
    latencies = sorted(_values(records, "latency_ms"))
    return {
        "n_turns": len(records),
        "latency_ms_p50": _round(_percentile(latencies, 50)),
        "latency_ms_p95": _round(_percentile(latencies, 95)),
        "latency_ms_mean": _round(_mean(latencies)),
        "llm_calls_per_turn": _round(_mean(_values(records, "llm_calls"))),
        "prompt_tokens_per_turn": _round(_mean(_values(records, "prompt_tokens"))),
        "completion_tokens_per_turn": _round(_mean(_values(records, "completion_tokens"))),
        "prompt_tokens_by_turn": {t: _round(_mean(by_turn[t])) for t in sorted(by_turn)},
    }


def goal_tracking_report(
    dialogue_results: Iterable[GoalRecord],
    *,
    key: GoalKey | None = goal_key,
    similar: Similarity | None = None,
    threshold: float = 0.5,
    bins: int = 10,
) -> dict[str, Any]:
    """Corpus goal-tracking figures of a tracker over many dialogues (Sections 6-8).

    Each result is ``{"dialogue_id", "gold", "goals", "turns", "costs", "queries"}`` with
    ``gold`` an :class:`AtodDialogue` (or its dict) or ``None``, and optionally
    ``proactivity_verdicts``. dGCR and NTC are read from the tracker's memory (final ``status``,
    ``dependencies``, ``status_history``) and come from every dialogue, as do costs; detection,
    status accuracy, the progress curve and memory recall need gold. Final-state figures use
    the goals' ``status``; the curve uses ``turns``, so its last point can differ if the two
    disagree. A dialogue without ``turns`` has no curve. ``key``, ``similar`` and
    ``threshold`` go to :func:`match_goals`, which re-matches at every curve point.

    Returns:
        ``dgcr``, ``dgcr_gold`` (the same on the gold annotations), ``n_decided_goals``,
        ``n_blocked_goals``; ``ntc``, ``ntc_gold``, ``n_completed_goals``;
        ``goal_detection_precision``, ``goal_detection_recall``, ``goal_detection_f1``,
        ``n_pred_goals``, ``n_gold_goals``, ``n_matched_goals``; ``status_accuracy``;
        ``progress_curve`` (pooled); ``memory_recall_accuracy``, ``n_memory_queries``;
        ``proactivity_effectiveness`` (a dict, see :func:`proactivity_effectiveness`); the
        :func:`cost_report` figures; ``n_dialogues``, ``n_gold_dialogues``; ``dialogues``:
        per dialogue ``dialogue_id``, ``dgcr``, ``ntc``, ``goal_detection_f1``,
        ``status_accuracy``, ``memory_recall_accuracy``; ``macro``: their means over the
        dialogues where each is defined. Pooled as the module notes say; rounded.
    """

    def matcher(
        predicted: Sequence[GoalRecord], gold: AtodDialogue, turn: int | None
    ) -> list[Pair]:
        return match_goals(
            predicted, gold, turn=turn, key=key, similar=similar, threshold=threshold
        )

    totals: dict[str, int] = defaultdict(int)
    spans: list[int] = []
    gold_spans: list[int] = []
    curves: list[list[dict[str, Any]]] = []
    costs: list[GoalRecord] = []
    verdicts: list[bool | None] | None = None
    rows = []
    for result in dialogue_results:
        goals = list(result.get("goals") or [])
        completed, decided, blocked = _goal_counts(goals)
        dialogue_spans = turns_to_completion_per_goal(goals)
        _add(totals, completed=completed, decided=decided, blocked=blocked)
        spans += dialogue_spans
        costs += list(result.get("costs") or [])
        if result.get("proactivity_verdicts") is not None:
            verdicts = (verdicts or []) + list(result["proactivity_verdicts"])
        row: dict[str, Any] = {
            "dialogue_id": result.get("dialogue_id"),
            "dgcr": _ratio(completed, decided),
            "ntc": _mean(dialogue_spans),
            "goal_detection_f1": None,
            "status_accuracy": None,
            "memory_recall_accuracy": None,
        }
        if result.get("gold") is not None:
            gold = result["gold"]
            gold = gold if isinstance(gold, AtodDialogue) else AtodDialogue.model_validate(gold)
            gold_goals = gold_goal_records(gold)
            gold_completed, gold_decided, _ = _goal_counts(gold_goals)
            gold_spans += turns_to_completion_per_goal(gold_goals)
            counts = _gold_counts(goals, result.get("queries") or [], gold, matcher)
            _add(totals, gold_dialogues=1, gold_completed=gold_completed, **counts)
            _add(totals, gold_decided=gold_decided)
            f1 = _detection(counts["tp"], counts["n_pred"], counts["n_gold"])["f1"]
            row["goal_detection_f1"] = f1
            row["status_accuracy"] = _ratio(counts["status_correct"], counts["tp"])
            row["memory_recall_accuracy"] = _ratio(
                counts["recall_correct"], counts["recall_judged"]
            )
            turns = list(result.get("turns") or [])
            if turns:
                curves.append(
                    progress_curve(turns, gold.turns, _rematch(goals, turns, gold, matcher), bins)
                )
        rows.append(row)
    detection = _detection(totals["tp"], totals["n_pred"], totals["n_gold"])
    means = ("dgcr", "ntc", "goal_detection_f1", "status_accuracy", "memory_recall_accuracy")
    summary = {
        "n_dialogues": len(rows),
        "n_gold_dialogues": totals["gold_dialogues"],
        "dgcr": _round(_ratio(totals["completed"], totals["decided"])),
        "dgcr_gold": _round(_ratio(totals["gold_completed"], totals["gold_decided"])),
        "n_decided_goals": totals["decided"],
        "n_blocked_goals": totals["blocked"],
        "ntc": _round(_mean(spans)),
        "ntc_gold": _round(_mean(gold_spans)),
        "n_completed_goals": len(spans),
        "goal_detection_precision": _round(detection["precision"]),
        "goal_detection_recall": _round(detection["recall"]),
        "goal_detection_f1": _round(detection["f1"]),
        "n_pred_goals": totals["n_pred"],
        "n_gold_goals": totals["n_gold"],
        "n_matched_goals": totals["tp"],
        "status_accuracy": _round(_ratio(totals["status_correct"], totals["tp"])),
        "progress_curve": pool_progress_curves(curves),
        "memory_recall_accuracy": _round(_ratio(totals["recall_correct"], totals["recall_judged"])),
        "n_memory_queries": totals["recall_judged"],
        "proactivity_effectiveness": proactivity_effectiveness(verdicts),
    }
    macro = {
        name: _round(_mean([row[name] for row in rows if row[name] is not None])) for name in means
    }
    rounded = [
        {name: row[name] if name == "dialogue_id" else _round(row[name]) for name in row}
        for row in rows
    ]
    return summary | cost_report(costs) | {"dialogues": rounded, "macro": macro}


Matcher = Callable[[Sequence[GoalRecord], AtodDialogue, int | None], list[Pair]]


def _gold_counts(
    goals: Sequence[GoalRecord],
    queries: Iterable[GoalRecord],
    gold: AtodDialogue,
    matcher: Matcher,
) -> dict[str, int]:
    """One dialogue's final-state detection, status and memory-recall counts."""
    pairs = matcher(goals, gold, None)
    final = gold_statuses_at(gold.turns)
    pred = {str(goal["goal_id"]): goal.get("status") for goal in goals}
    correct, judged = _recall_counts(queries)
    return {
        "tp": len(pairs),
        "n_pred": len(goals),
        "n_gold": sum(_mentioned(status) for status in final.values()),
        "status_correct": _status_hits(pairs, pred, final),
        "recall_correct": correct,
        "recall_judged": judged,
    }


def _rematch(
    goals: Sequence[GoalRecord], turns: Sequence[GoalRecord], gold: AtodDialogue, matcher: Matcher
) -> Callable[[int], list[Pair]]:
    """Pairs at utterance t between the goals the tracker held then and the gold ones."""

    def pairs_at(turn: int) -> list[Pair]:
        held = predicted_states_at(turns, turn)
        return matcher([goal for goal in goals if str(goal["goal_id"]) in held], gold, turn)

    return pairs_at


def _add(totals: dict[str, int], **counts: int) -> None:
    for name, count in counts.items():
        totals[name] += count


def _goal_counts(goals: Sequence[GoalRecord]) -> tuple[int, int, int]:
    statuses = {str(goal["goal_id"]): goal.get("status") for goal in goals}
    dependencies = {str(goal["goal_id"]): goal.get("dependencies") or [] for goal in goals}
    return _dgcr_counts(statuses, dependencies)


def _dgcr_counts(
    statuses: Mapping[str, str | None], dependencies: Mapping[str, Iterable[str]] | None
) -> tuple[int, int, int]:
    """Completed, decided and blocked goals as dGCR counts them."""
    completed = decided = blocked = 0
    for goal_id, status in statuses.items():
        prerequisites = [p for p in (dependencies or {}).get(goal_id, ()) if p != goal_id]
        if any(_status(statuses.get(p)) != "completed" for p in prerequisites):
            blocked += 1
        elif _status(status) in DECIDED_STATUSES:
            decided += 1
            completed += _status(status) == "completed"
    return completed, decided, blocked


def _recall_counts(queries: Iterable[GoalRecord]) -> tuple[int, int]:
    correct = judged = 0
    for query in queries:
        expected = query.get("expected")
        if expected is None:
            continue
        expected = {expected} if isinstance(expected, str) else set(expected)
        retrieved = query.get("retrieved")
        judged += 1
        correct += not expected if retrieved is None else retrieved in expected
    return correct, judged


def _detection(tp: int, n_pred: int, n_gold: int) -> DetectionScores:
    return {
        "precision": _ratio(tp, n_pred),
        "recall": _ratio(tp, n_gold),
        "f1": _ratio(2 * tp, n_pred + n_gold),
        "tp": tp,
        "n_pred": n_pred,
        "n_gold": n_gold,
    }


def _curve_point(counts: Mapping[str, int]) -> dict[str, Any]:
    f1 = _detection(counts["n_matched"], counts["n_pred"], counts["n_gold"])["f1"]
    accuracy = _ratio(counts["n_status_correct"], counts["n_matched"])
    return {"detection_f1": _round(f1), "status_accuracy": _round(accuracy)} | dict(counts)


def _status_hits(
    pairs: Sequence[Pair], pred_status: Mapping[str, Any], gold_status: Mapping[str, Any]
) -> int:
    missing = [p for p, g in pairs if p not in pred_status] + [
        g for p, g in pairs if g not in gold_status
    ]
    if missing:
        raise ValueError(f"no status for matched goal(s) {missing}")
    return sum(_status(pred_status[p]) == _status(gold_status[g]) for p, g in pairs)


def _check_one_to_one(pairs: Sequence[Pair]) -> None:
    for side in (0, 1):
        ids = [pair[side] for pair in pairs]
        if len(set(ids)) != len(ids):
            raise ValueError(f"pairs must be one-to-one, got {list(pairs)}")


def _gold_timeline(turns: Sequence[AtodTurn]) -> list[dict[str, str]]:
    """The gold statuses after each utterance, accumulated."""
    state: dict[str, str] = {}
    timeline = []
    for utterance in turns:
        state = state | utterance.all_goals
        state |= {change.goal_id: change.new_status for change in utterance.goal_status_changes}
        timeline.append(state)
    return timeline


def _first_mentions(turns: Sequence[AtodTurn]) -> dict[str, int]:
    """Gold goal id -> the first utterance after which it is mentioned."""
    first: dict[str, int] = {}
    for utterance, state in zip(turns, _gold_timeline(turns), strict=True):
        for goal_id, status in state.items():
            if _mentioned(status):
                first.setdefault(goal_id, utterance.turn_id)
    return first


def _first_turn(goal: GoalRecord) -> float:
    turns = [
        int(e["turn"]) for e in goal.get("status_history") or [] if _mentioned(_status(e["status"]))
    ]
    return min(turns, default=float("inf"))


def _status(value: object) -> str | None:
    return None if value is None else str(normalise_status(value))


def _mentioned(status: str | None) -> bool:
    return status is not None and status != NOT_MENTIONED


def _values(records: Sequence[GoalRecord], name: str) -> list[float]:
    return [float(record[name]) for record in records if record.get(name) is not None]


def _percentile(ordered: Sequence[float], q: float) -> float | None:
    if not ordered:
        return None
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
