"""The corpus tallies keep counts, not per-turn lists (issue 22): same figures, flat memory.

Each figure is checked against the list-based way of computing it (the lists built in the test,
the formulas written out), with ``==``; a tally built on two halves and merged against one built
on the whole; and the stored state after N and 10 N records, counted item by item.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pytest

from tests.unit.test_goal_tracking_metrics import D1 as D1_TRACKED
from tests.unit.test_goal_tracking_metrics import corpus
from todeval.evals.goal_tracking_schema import AtodDialogue
from todeval.evals.metrics.agreement import cohen_kappa, fleiss_kappa
from todeval.evals.metrics.evaluation import SETTLED_FIELDS, EvaluationTally, drilldown_dialogue
from todeval.evals.metrics.goal_success import tally as goal_success_tally
from todeval.evals.metrics.goal_success.calibration import applied_calibration, teacher_calibration
from todeval.evals.metrics.goal_success.success_rate import score_goals
from todeval.evals.metrics.goal_success.suite import GoalSuccessSuite
from todeval.evals.metrics.goal_success.tally import GoalSuccessTally
from todeval.evals.metrics.goal_tracking.costs import CostCounts
from todeval.evals.metrics.goal_tracking.goal_detection import GoalMatcher
from todeval.evals.metrics.goal_tracking.goal_records import GoldTimeline
from todeval.evals.metrics.goal_tracking.report import GoalTrackingTally, goal_tracking_report
from todeval.evals.metrics.goal_tracking.suite import GoalTrackingSuite
from todeval.evals.metrics.quantile_sketch import LogHistogram
from todeval.evals.metrics.record_metrics import corpus_values
from todeval.evals.metrics.running import Packed, PackedMap, RunningMean
from todeval.evals.metrics.suite_tally import TallySettings
from todeval.evals.record_views import EvaluationRecord, atod_record
from todeval.evals.report.evaluation import records_section
from todeval.evals.results import EvaluationLine, ThreadResult
from todeval.evals.schema import RCOF_CODES, Dialogue

JUDGES = ("local:a", "local:b", "local:c")
CODES = list(RCOF_CODES)


def stored(obj: Any, seen: set[int] | None = None) -> int:
    """Items held in containers reachable from ``obj`` (lists, dicts, sets, plain objects)."""
    seen = set() if seen is None else seen
    if id(obj) in seen or isinstance(obj, str | bytes | int | float | bool) or obj is None:
        return 0
    seen.add(id(obj))
    if isinstance(obj, dict):
        return len(obj) + sum(stored(v, seen) for v in obj.values())
    if isinstance(obj, list | tuple | set | frozenset):
        return len(obj) + sum(stored(v, seen) for v in obj)
    if hasattr(obj, "__dict__") and not callable(obj):
        return stored(vars(obj), seen)
    return 0


# --- the list-based formulas -----------------------------------------------------------------


def list_kappa(a: Sequence[Hashable | None], b: Sequence[Hashable | None]) -> float | None:
    pairs = [(x, y) for x, y in zip(a, b, strict=True) if x is not None and y is not None]
    if not pairs or len({label for pair in pairs for label in pair}) == 1:
        return None
    n = len(pairs)
    observed = sum(x == y for x, y in pairs) / n
    count_a, count_b = Counter(x for x, _ in pairs), Counter(y for _, y in pairs)
    expected = sum(count_a[label] * count_b[label] for label in count_a) / (n * n)
    return (observed - expected) / (1 - expected)


def list_fleiss(items: Sequence[Sequence[Hashable]]) -> float | None:
    raters = len(items[0])
    totals = Counter(label for item in items for label in item)
    if len(totals) == 1:
        return None
    agreement = [
        (sum(c * c for c in Counter(item).values()) - raters) / (raters * (raters - 1))
        for item in items
    ]
    expected = sum((c / (raters * len(items))) ** 2 for c in totals.values())
    return (sum(agreement) / len(items) - expected) / (1 - expected)


def test_counted_kappas_equal_the_list_formulas() -> None:
    rng = random.Random(7)
    labels = ["success", "failure", None]
    a = [rng.choice(labels) for _ in range(500)]
    b = [rng.choice(labels) for _ in range(500)]
    items = [[rng.choice(labels[:2] + ["E1"]) for _ in range(3)] for _ in range(400)]
    assert cohen_kappa(a, b) == list_kappa(a, b)
    assert fleiss_kappa(items) == list_fleiss(items)


def test_the_latency_sketch_stays_within_its_error_and_merges_exactly() -> None:
    rng = np.random.default_rng(3)
    values = rng.lognormal(5, 1.2, 20_000).tolist()
    whole, first, second = LogHistogram(), LogHistogram(), LogHistogram()
    for index, value in enumerate(values):
        whole.add(value)
        (first if index < len(values) // 2 else second).add(value)
    first.merge(second)
    bound = whole.relative_error * (1 + 1e-9)
    for q in (0, 1, 25, 50, 90, 95, 99, 100):
        exact = float(np.percentile(values, q))
        estimate = whole.quantile(q)
        assert estimate is not None and abs(estimate - exact) <= bound * exact, q
        assert first.quantile(q) == estimate
    assert whole.quantile(50) is not None and LogHistogram().quantile(50) is None
    assert len(whole.positive) < 1000  # buckets: the log of the range, not the count
    one = LogHistogram()
    one.add(70.0)
    assert one.quantile(95) == 70.0  # the exact extremes are kept


# --- goal success ----------------------------------------------------------------------------


def voted_turn(rng: random.Random, number: int) -> dict[str, Any]:
    teachers = []
    for judge in JUDGES:
        quality = rng.choice(["success", "success", "failure", None])
        rcof = rng.choice([*CODES, None]) if quality == "failure" else None
        teachers.append({"judge": judge, "quality": quality, "rcof": rcof, "rationale": "r"})
    votes = Counter(t["quality"] for t in teachers if t["quality"] is not None)
    quality, count = votes.most_common(1)[0] if votes else (None, 0)
    decided = quality if count >= 2 else None
    codes = [t["rcof"] for t in teachers if t["quality"] == "failure" and t["rcof"]]
    turn = {
        "turn_number": number,
        "quality": decided,
        "rcof": codes[0] if decided == "failure" and codes else None,
        "ambiguous": decided is None and count == 1 and len(votes) > 1,
        "decided_by": "vote" if decided else rng.choice(["undecided", None]),
        "teachers": teachers,
    }
    if rng.random() < 0.1:
        turn["human"] = {"quality": rng.choice(["success", "failure"]), "rcof": "E2"}
    return turn


def goal_success_corpus(n: int, seed: int = 1) -> list[tuple[Dialogue, ThreadResult]]:
    rng = random.Random(seed)
    out = []
    for index in range(n):
        size = rng.randint(1, 6)
        turns = [voted_turn(rng, number) for number in range(1, size + 1)]
        gold = [
            {"quality": rng.choice(["success", "failure"]), "rcof": rng.choice(CODES)}
            if rng.random() < 0.5
            else {}
            for _ in turns
        ]
        dialogue = Dialogue.model_validate(
            {
                "dialogue_id": f"d{index}",
                "turns": [
                    {"turn_number": t["turn_number"], "user_msg": "hi", **g}
                    for t, g in zip(turns, gold, strict=True)
                ],
            }
        )
        cut = rng.randint(1, size)
        spans = [{"goal_index": 1, "start_turn": 1, "end_turn": cut}]
        if cut < size:
            spans.append({"goal_index": 2, "start_turn": cut + 1, "end_turn": size})
        output = {"turns": turns, "goals": score_goals(spans, turns), "segmentation": {}}
        out.append((dialogue, ThreadResult(dialogue.dialogue_id, f"t{index}", output)))
    return out


def audits_for(records: list[tuple[Dialogue, ThreadResult]]) -> dict[tuple[str, int], Any]:
    every = [(d.dialogue_id, t.turn_number) for d, _ in records for t in d.turns]
    return {key: {"quality": "success", "rcof": None} for key in every[::7]}


def test_goal_success_figures_equal_the_list_figures() -> None:
    records = goal_success_corpus(120)
    audits = audits_for(records)
    tally = GoalSuccessTally(audits, keep_turns=True)  # the per-turn lists too: the list way
    for record, result in records:
        tally.add(record, result)
    summary = tally.summary({"teachers": list(JUDGES)})
    goals = [g for _, r in records for g in (r.output or {})["goals"]]
    turns = tally.turns
    decided = [g["success"] for g in goals if g["success"] is not None]
    credits = [g["fractional_credit"] for g in goals if g["fractional_credit"] is not None]
    assert summary["gsr"] == round(sum(decided) / len(decided), 4)
    assert summary["fractional_credit"] == round(sum(credits) / len(credits), 4)
    assert summary["n_goals"] == len(goals) and summary["n_turns"] == len(turns)
    assert summary["failed_goals"] == sum(g["success"] is False for g in goals)
    assert summary["rcof"] == {
        code: sum(g["success"] is False and g["rcof"] == code for g in goals) for code in RCOF_CODES
    }
    complete = [[x["quality"] for x in t["teachers"]] for t in turns]
    complete = [item for item in complete if None not in item]
    kappa = summary["teacher_kappa"]
    assert kappa["quality"]["fleiss_kappa"] == round(list_fleiss(complete) or 0, 4)
    quality = {j: [t["teachers"][i]["quality"] for t in turns] for i, j in enumerate(JUDGES)}
    assert kappa["pairwise"][0]["quality_kappa"] == round(
        list_kappa(quality[JUDGES[0]], quality[JUDGES[1]]) or 0, 4
    )
    gold = [d.turns[i].quality for d, r in records for i in range(len(d.turns))]
    vote = [t["quality"] for t in turns]
    assert summary["gold_agreement"]["vote"]["quality"]["kappa"] == round(
        list_kappa(vote, gold) or 0, 4
    )
    assert summary["human_verdicts"] == sum(h is not None for h in tally.human)
    audited = [
        a is not None and t["decided_by"] != "human"
        for a, t in zip(tally.audited, turns, strict=True)
    ]
    assert tally.calibration() == teacher_calibration(turns, tally.human, audited)
    prior = {"teachers": [{"judge": JUDGES[0], "flagged": True, "n": 3}], "n_verdicts": 3}
    assert tally.applied_calibration(prior, "c.json") == applied_calibration(prior, turns, "c.json")
    leaning = sum(
        t["decided_by"] == "vote"
        and len(agree := [x for x in t["teachers"] if x["quality"] == t["quality"]]) >= 2
        and len([x for x in agree if x["judge"] != JUDGES[0]]) < 2
        for t in turns
    )
    assert tally.applied_calibration(prior, "c.json")["votes_leaning_on_flagged"] == leaning


def test_goal_success_halves_merged_give_the_whole() -> None:
    records = goal_success_corpus(90, seed=5)
    audits = audits_for(records)
    whole, first, second = (GoalSuccessTally(audits, keep_turns=False) for _ in range(3))
    for index, (record, result) in enumerate(records):
        whole.add(record, result)
        (first if index < 40 else second).add(record, result)
    first.merge(second)
    assert first.summary({}) == whole.summary({})
    assert first.calibration() == whole.calibration()


def test_packed_values_come_back_equal_as_they_were_when_kept() -> None:
    line = {"record_id": "d1", "score": 0.1 + 0.2, "turns": [{"n": 1, "text": "héllo"}]}
    packed = Packed()
    packed.append(line)
    packed.append(("pair", {"a": None}))
    line["turns"].append({"n": 2})  # kept as it was when appended
    assert list(packed) == [
        {"record_id": "d1", "score": 0.1 + 0.2, "turns": [{"n": 1, "text": "héllo"}]},
        ["pair", {"a": None}],
    ]
    more = Packed()
    more.take(packed, 1)
    more.take(packed, -3)  # a cap already passed takes nothing
    assert len(more) == 1 and list(more) == list(packed)[:1]


def test_goal_success_state_does_not_grow_with_the_corpus(monkeypatch: Any) -> None:
    monkeypatch.setattr(goal_success_tally, "REPORT_FAILED_GOALS", 5)
    sizes = []
    for n in (500, 5000):
        tally = GoalSuccessTally(keep_turns=False)
        for record, result in goal_success_corpus(n):
            tally.add(record, result)
        sizes.append(stored(tally))
    # only a few label pairs first met later (the confusion matrices fill up), not 10x; the
    # report's failed goals are packed bytes, capped
    assert sizes[1] <= sizes[0] * 1.1


def test_goal_success_packs_each_failed_dialogue_once(monkeypatch: Any) -> None:
    views: Counter[str] = Counter()
    drilldown = goal_success_tally._drilldown_view

    def counted(record: Dialogue) -> dict[str, Any]:
        views[record.dialogue_id] += 1
        return drilldown(record)

    monkeypatch.setattr(goal_success_tally, "_drilldown_view", counted)
    tally = GoalSuccessTally(keep_turns=False)
    for record, result in goal_success_corpus(200):
        tally.add(record, result)
    failed = Counter(str(line["dialogue_id"]) for line in tally.report_goals)
    assert any(count > 1 for count in failed.values())  # some dialogue failed two goals
    assert views == Counter(set(failed))  # its view was built and packed once
    shown, dialogues = tally.report_view()
    assert set(dialogues) == set(failed) and len(shown) == sum(failed.values())


# --- goal tracking ---------------------------------------------------------------------------


def test_goal_tracking_tally_gives_the_list_report_and_merges() -> None:
    results = corpus() * 7
    report = goal_tracking_report(results)
    whole, first, second = GoalTrackingTally(), GoalTrackingTally(), GoalTrackingTally()
    for index, result in enumerate(results):
        whole.add(result)
        (first if index < 10 else second).add(result)
    first.merge(second)
    streamed, merged = whole.report(), first.report()
    sketched = ("latency_ms_p50", "latency_ms_p95", "latency_ms_relative_error")
    exact = {k: v for k, v in report.items() if k not in {*sketched, "dialogues"}}
    assert {k: streamed[k] for k in exact} == exact == {k: merged[k] for k in exact}
    assert [p["n_dialogues"] for p in streamed["progress_curve"]] == [14] * 10
    for q in ("latency_ms_p50", "latency_ms_p95"):
        assert abs(streamed[q] - report[q]) <= 0.01 * report[q] + 1e-4
        assert merged[q] == streamed[q]
    sizes = []
    for copies in (5, 50):
        tally = GoalTrackingTally()
        for result in corpus() * copies:
            tally.add(result)
        sizes.append(stored(tally))
    assert sizes[1] == sizes[0]


# --- evaluation ------------------------------------------------------------------------------


def evaluation_line(index: int) -> dict[str, Any]:
    status = "failed" if index % 13 == 0 else "paused" if index % 17 == 0 else "done"
    metrics = {} if status != "done" else {"gsr": {"num": index % 3, "den": 2.0}}
    if status == "done" and index % 2:
        metrics["dgcr"] = {"num": 1.0, "den": float(index % 4 + 1)}
    error = "boom" if status == "failed" else None
    return {"record_id": f"r{index}", "status": status, "error": error, "metrics": metrics}


@pytest.mark.parametrize("keep_lines", [True, False])
def test_evaluation_record_figures_pool_like_the_lines(keep_lines: bool) -> None:
    tally = EvaluationTally({}, keep_lines=keep_lines)
    lines = [evaluation_line(i) for i in range(3000)]
    for line in lines:
        tally._count(line)
    figures = tally.record_figures()
    assert figures["metrics"] == corpus_values(line["metrics"] for line in lines)
    failed = [{"record_id": x["record_id"], "error": x["error"]} for x in lines if x["error"]]
    paused = [x["record_id"] for x in lines if x["status"] == "paused"]
    assert figures["failed_records"] == len(failed) and figures["failed"] == failed
    assert figures["paused_records"] == len(paused) and figures["paused"] == paused
    assert figures["records"] == len(lines) and len(tally.lines) == len(lines) * keep_lines


def test_evaluation_counts_do_not_grow_without_lines() -> None:
    sizes = []
    for n in (2000, 20_000):
        tally = EvaluationTally({}, keep_lines=False)
        for index in range(n):
            tally._count(evaluation_line(index) | {"status": "done", "error": None})
        sizes.append(stored(tally))
    assert sizes[1] == sizes[0]


def test_evaluation_keeps_a_shown_dialogue_as_its_drilldown_reads_it() -> None:
    """Each turn's text, not its metadata; the records section is drawn the same from it."""
    turns = [
        {"turn_number": 1, "user_msg": "book <a> room", "response": "done",
         "metadata": {"frames": ["x" * 500]}, "source_names": ["kb"]},
        {"turn_number": 2, "user_msg": "thanks", "response": "bye"},
    ]  # fmt: skip
    dialogue = Dialogue.model_validate({"dialogue_id": "d1", "turns": turns})
    tally = EvaluationTally({})
    record = EvaluationRecord(record_id="d1", kind="dialogue", dialogue=dialogue)
    tally.add(record, ThreadResult("d1", "t1", {"results": {}, "suites": []}))
    kept = PackedMap(tally.shown_dialogues)
    assert kept["d1"] == drilldown_dialogue(dialogue)
    assert set(kept["d1"]["turns"][0]) == {"turn_number", "user_msg", "response"}
    full = {"d1": dialogue.model_dump(mode="json")}
    drawn = [str(records_section(tally.shown, views, total=1).body) for views in (kept, full)]
    assert drawn[0] == drawn[1] and "book &lt;a&gt; room" in drawn[0] and "bye" in drawn[0]


def redumped(suite: str, part: dict[str, Any]) -> dict[str, Any]:
    """The suite's part as ``results.jsonl``'s line model validates and dumps it."""
    line = EvaluationLine(
        record_id="r", kind="atod", suites=[suite], thread_id="t", resumed=False,
        status="done", error=None, **{suite: part},
    )  # fmt: skip
    dumped: dict[str, Any] = line.row()[suite]
    return dumped


def test_settled_suite_parts_are_what_the_line_dump_would_make_of_them() -> None:
    """A part a suite calls settled goes in as it is: dumping it again would change nothing."""
    gold = D1_TRACKED
    goals = [
        {"id": "p1", "domain": "hotels_1", "intent": "reservehotel", "description": "a hotel",
         "slots": {"n": (1, 2), "x": float("nan")}, "status": "open",
         "status_history": [{"turn": 1, "status": "open"}], "dependencies": []},
    ]  # fmt: skip
    output = {
        "goals": goals,
        "turns": [{"turn": 1, "goal_states": {"p1": "open"}, "at": {3: {"a", "b"}}}],
        "costs": [{"turn": 1, "latency_ms": 5}],
        "queries": [],
    }
    record = atod_record(gold)
    tracking = GoalTrackingSuite.start(TallySettings())
    part = tracking.add(record, ThreadResult(record.record_id, "t", output))
    assert tracking.settled(part) and redumped("goal_tracking", part) == part
    success = GoalSuccessSuite()
    settled = 0
    for dialogue, result in goal_success_corpus(30, seed=3):
        view = EvaluationRecord(record_id=dialogue.dialogue_id, kind="dialogue", dialogue=dialogue)
        part = success.add(view, result)
        if success.settled(part):
            settled += 1
            assert redumped("goal_success", part) == part
    assert settled == 30
    # A NaN credit stays NaN in the goal's row and is null in the line: not settled.
    nan = {"goals": [{"fractional_credit": float("nan"), "turns": []}]}
    assert not success.settled(nan) and redumped("goal_success", nan)["goals"][0] == {
        "fractional_credit": None,
        "turns": [],
    }
    assert not success.settled({"goals": [], "unsegmented_reason": ("why",)})


def test_the_evaluation_line_is_the_same_with_settled_parts() -> None:
    """The line's fields in their order, a settled part in its suite's place."""
    fields = {
        "record_id": "r", "kind": "dialogue", "suites": ["goal_success", "goal_tracking"],
        "thread_id": "t", "resumed": False, "status": "done", "error": None,
        "metrics": {"gsr": {"num": 1, "den": 2}},
    }  # fmt: skip
    parts: dict[str, dict[str, Any]] = {
        "goal_success": {"goals": [{"a": 1}]},
        "goal_tracking": {"goals": [], "x": [1]},
    }
    whole = EvaluationLine(**fields, **parts).row()
    for settled in ({"goal_success"}, {"goal_tracking"}, set(parts)):
        rest = {suite: part for suite, part in parts.items() if suite not in settled}
        row = EvaluationLine(**fields, **rest).row({s: parts[s] for s in settled})
        assert row == whole and list(row) == list(whole)
    assert SETTLED_FIELDS == {"goal_success", "goal_tracking", "goal_shift", "memory", "proactive"}


def test_goal_tracking_takes_the_scored_matcher_only_when_it_is_its_own() -> None:
    """The matcher scoring built is reused for the figures, never one matching otherwise."""
    checked = 0
    for result in corpus():
        gold = result["gold"]
        if not isinstance(gold, AtodDialogue):
            continue
        timeline = GoldTimeline.of(gold.turns)
        base = result | {"gold_timeline": timeline}
        plain = GoalTrackingTally().add(base)
        same = GoalMatcher(result["goals"], gold, timeline=timeline)
        assert GoalTrackingTally()._matcher(result["goals"], gold, timeline, same) is same
        assert GoalTrackingTally().add(base | {"gold_matcher": same}) == plain
        # without keys nothing pairs: a tally that matches by key builds its own
        other = GoalMatcher(result["goals"], gold, key=None, timeline=timeline)
        assert GoalTrackingTally().add(base | {"gold_matcher": other}) == plain
        assert plain["goal_detection_f1"]
        checked += 1
    assert checked


def test_extending_counts_as_adding_one_at_a_time() -> None:
    """The sketch, the running means and the cost counts: the same state, float sums included."""
    rng = random.Random(11)
    values = [rng.choice([0.0, -1.5, 0.1]) * rng.random() * 1000 for _ in range(400)]
    one, many = LogHistogram(), LogHistogram()
    for value in values:
        one.add(value)
    many.extend(values[:150])
    many.extend(values[150:])
    assert one == many and one.quantile(95) == many.quantile(95)
    with pytest.raises(ValueError, match="finite"):
        many.extend([1.0, float("nan")])
    mean, means = RunningMean(), RunningMean()
    for value in values:
        mean.add(value)
    means.extend(values)
    assert (mean.n, mean.total) == (means.n, means.total)
    records: list[dict[str, Any]] = [
        {"turn": rng.randint(1, 5), "latency_ms": rng.random() * 300,
         "llm_calls": rng.randint(0, 2), "prompt_tokens": rng.choice([None, rng.random() * 900]),
         "completion_tokens": rng.choice([None, 7])}
        for _ in range(300)
    ]  # fmt: skip
    added, extended = CostCounts(), CostCounts()
    for record in records:
        added.add(record)
    extended.extend(records[:100])
    extended.extend(records[100:])
    assert added == extended and added.report() == extended.report()
