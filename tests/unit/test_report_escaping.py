"""Every report template autoescapes: a payload in any section's data comes out as text.

Each case builds one section (or the page, or a chart) from data whose every string carries
:data:`PAYLOAD`; the test records which templates rendered, and checks that the output has no
element or attribute the payload tried to inject and shows the payload's text escaped. Every
template the package ships must be rendered by some case, so a new template needs one here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from markupsafe import Markup, escape

from tests.unit.test_report import Page
from todeval.evals.report import Section, Series, bar_chart, render_report
from todeval.evals.report.compare import compare_sections
from todeval.evals.report.evaluation import figures_section, records_section
from todeval.evals.report.goal_shift import goal_shift_section
from todeval.evals.report.goal_success import goal_success_section
from todeval.evals.report.goal_tracking import goal_tracking_section
from todeval.evals.report.llm_usage import llm_usage_section
from todeval.evals.report.memory import memory_section
from todeval.evals.report.page import num_html, skipped_records_html, table, value_html
from todeval.evals.report.proactive import synthesis_section, task_section
from todeval.evals.report.simulation import simulation_section
from todeval.evals.report.svg import line_chart
from todeval.evals.report.templating import environment, macro

PAYLOAD = (
    '"><script>window.__pwned=1</script><img src=x onerror="window.__pwned=1">'
    '\'><svg onload=window.__pwned=1></textarea><a href="javascript:window.__pwned=1">x</a>'
)
"""Breaks out of attributes (both quotes) and elements, and tries script, handlers and links."""
P = PAYLOAD
ESCAPED_SCRIPT = str(escape("<script>window.__pwned=1</script>"))
INJECTED_TAGS = {"script", "img", "textarea", "iframe", "object", "embed"}


def check_escaped(html: str) -> None:
    """No injected element, handler or javascript: link; the payload is there as text."""
    page = Page(html)
    assert page.errors == [] and page.stack == []
    for tag, attrs in page.tags:
        assert tag not in INJECTED_TAGS, tag
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert not str(attrs.get("href") or "").lower().startswith("javascript:"), attrs
        assert tag != "svg" or attrs.get("class") == "chart", attrs  # only the report's charts
    assert ESCAPED_SCRIPT in html


def goal_success_case() -> str:
    turn = {"turn_number": 1, "quality": "failure", "rcof": P, "ambiguous": True,
            "decided_by": P, "teachers": [{"judge": P, "quality": P, "rcof": P, "rationale": P}],
            "human": {"quality": "failure", "note": P}}  # fmt: skip
    goals = [{"dialogue_id": P, "goal_index": 0, "start_turn": P, "end_turn": P,
              "success": False, "rcof": P, "fractional_credit": 0.0, "pending_review": True,
              "turns": [turn]}]  # fmt: skip
    dialogues = {P: {"turns": [{"turn_number": 1, "user_msg": P, "response": P,
                                "source_names": [P], "source_snippets": [P]}]}}  # fmt: skip
    agreement = {"n_turns": 1, "teachers": [{"judge": P, "quality": {"accuracy": 0.5}}],
                 "vote": {}}  # fmt: skip
    summary = {
        "gsr": 0.5, "judges": {"segmentation": P, "turn_quality": [P]},
        "undecided_goals_by_reason": {P: 1}, "gold_agreement": agreement,
        "validity": {"gsr": {"judges": [P], "cards": {P: None}, "unchecked": True}},
        "skipped": [{"file": P, "line": P, "dialogue_id": P, "field": P, "message": P}],
        "failed": [{"dialogue_id": P, "error": P}],
        "calibration": _calibration_payload(),
    }  # fmt: skip
    return goal_success_section(summary, goals, dialogues).body


def _calibration_payload() -> dict[str, Any]:
    """A per-teacher calibration (this run's and an applied one) with the payload everywhere."""
    causes = {P: {"n": P, "agreed": P, "agreement": P}, "E1": {"n": 1, "agreement": 0.5}}
    row = {"judge": P, "n": P, "agreement": P, "audited": {"n": P}, "escalated": P,
           "by_root_cause": causes, "flagged": True, "flag_reason": P}  # fmt: skip
    this_run = {"n_verdicts": P, "flag_below": P, "flag_basis": P, "teachers": [row]}
    applied = {"source": P, "n_verdicts": P, "teachers": [row], "flagged": [P],
               "votes_leaning_on_flagged": P}  # fmt: skip
    return {"this_run": this_run, "file": P, "applied": applied}


def goal_tracking_case() -> str:
    goal = {
        "goal_id": P,
        "service": P,
        "intent": P,
        "description": P,
        "slots": {P: P},
        "status": P,
        "status_history": [{"turn": 1, "status": P}],
        "dependencies": [P],
    }
    line = {"dialogue_id": P, "goals": [goal], "turns": [{"turn": 2}], "gold": {P: P}}
    summary = {"judges": {P: P}, "n_gold_dialogues": 1, "n_turns": 0,
               "proactivity_effectiveness": {"value": None, "reason": P},
               "progress_curve": [{"progress": 0.5, "detection_f1": 0.5, "n_dialogues": 1}],
               "confirmed_breakdown": {"completed": {P: 1}},
               "skipped": [{"file": P, "line": 1, "message": P}]}  # fmt: skip
    return goal_tracking_section(summary, [line]).body


def memory_case() -> str:
    line = {"eval_id": P, "intent": P, "task_goal": {P: P}, "response": P, "dte": 2,
            "scores": {"jga": 0.0, "slot_accuracy": 0.5}}  # fmt: skip
    summary = {"items": P, "judges": {P: P}, "gpt4_score_reason": P, "slot_ceiling_pooled": 0.5}
    return memory_section(summary, [line]).body


def goal_shift_case() -> str:
    group = {"conversations": P, "num_redundant": P, "gsrt": {"shifts": P}}
    summary = {"judges": {P: [P]}, "by_domain": {P: group}, "by_persona": {P: group},
               "issues": [{"dialogue_id": P, "field": P, "message": P}],
               "skipped": [{"file": P, "line": P, "message": P}]}  # fmt: skip
    shift = {"turn": P, "from_goal": P, "to_goal": P, "ack": 1, "recovered": True}
    rows = [{"task_id": P, "tool_correctness": 0.5, "param_validity": 1.0, "shifts": [shift]}]
    return goal_shift_section(summary, rows).body


def compare_case() -> str:
    figure = {"value": 0.5, "low": 0.4, "high": 0.6, "n": P}
    comparison = {
        "metrics": {P: {"label": P, "a": figure, "b": figure, "change": P,
                        "difference": {"delta": 0.1, "low": -0.1, "high": 0.2, "n": P},
                        "most_changed": [{"record_id": P, "a": 0.1, "b": 0.2, "change": 0.1}]}},
        "bootstrap": {"resamples": P, "seed": P, "pairing": P},
        "records": {"both": 1, "only_a": [P], "only_b": [P]},
        "runs": {"a": {"judges": {P: {P: [P]}}, "context": {P: P}, "status": {P: 1},
                       "summary_error": P}, "b": {"judges": {P: P}, "context": {P: 1}}},
    }  # fmt: skip
    return "".join(section.body for section in compare_sections(comparison))


def evaluation_case() -> str:
    card = {"weak": True, "positive": P, "checks": [{"human": True, "kappa": 0.1, "data": P,
                                                      "n": P, "recall": 0.5}]}  # fmt: skip
    summary = {
        "metrics": {"gsr": 0.5, "tsr": 0.5},
        "validity": {"gsr": {"judges": [P], "cards": {P: card}, "weak": True},
                     "tsr": {"note": P}},
        "counts": {"by_suite": {P: 1}}, "failed": [{"record_id": P, "error": P}],
        "skipped": [{"file": P, "line": 1, "dialogue_id": P, "field": P, "message": P}],
        "transcript_issues": [{"dialogue_id": P, "field": P, "message": P}],
    }  # fmt: skip
    line = {
        "record_id": P, "kind": P, "status": P, "suites": [P], "error": P,
        "goal_success": {"goals": [{"start_turn": P, "end_turn": P, "success": None, "rcof": P,
                                    "turns": [{"turn_number": 1, "quality": P, "rcof": P}]}]},
        "goal_tracking": {"goals": [{"goal_id": P, "service": P, "description": P,
                                     "status": P}]},
        "goal_shift": {"shifts": [P]}, "memory": {"response": P},
    }  # fmt: skip
    dialogues = {P: {"turns": [{"turn_number": 1, "user_msg": P, "response": P}]}}
    return figures_section(summary).body + records_section([line], dialogues, total=2).body


def llm_usage_case() -> str:
    counts = {"calls": 2, "cache_hits": 0, "failures": 1, "retries": 0, "prompt_tokens": 3,
              "completion_tokens": 1, "latency_s": 0.5}  # fmt: skip
    summary = {"llm_usage": {P: counts}, "unanswered_records": {"count": P}}
    section = llm_usage_section(summary)
    assert section is not None
    return section.body


def simulation_case() -> str:
    failure = {"id": P, "reward": 0.0, "cause": P, "message_index": P, "evidence": P}
    summary = {"simulation": {"counts": {"terminations": {P: 1}},
                              "attribution": {"failures": [failure]}}}  # fmt: skip
    return simulation_section(summary).body


def proactive_case() -> str:
    """Both ProactiveEval sections (paper 003): a synthesis run and a dialogue-guidance run."""
    synthesis = {"counts": {"kept": P, "attempted": P, "rejected_by_final_check": P, "failed": P},
                 "by_domain": {P: {P: 1}}, "refinement_rounds": {P: P},
                 "mean_hits_by_round": {P: 0.5},
                 "judges": {"synthesis_writer": P, "target_prediction": [P],
                            "final_check": [P]},
                 "skipped": [{"file": P, "line": P, "message": P}]}  # fmt: skip
    figure = {"mean": 0.5, "std": None}
    task = {"task": "dialogue_guidance", "figures": {"score": figure},
            "by": {P: {P: {"score": figure}}}, "run": {"agent": P}, "judges": {P: P},
            "counts": {"runs": P, "environments": P, "failed": P, "skipped": P}}  # fmt: skip
    lines = [{"eval_id": P, "stop_reason": P, "guidance_verdict": {"basis": P}}]
    return synthesis_section(synthesis).body + task_section(task, lines).body


def charts_case() -> str:
    bars = bar_chart([P, "b"], [Series(P, [1.0, None], [P, P]), Series(P, [0.5, 0.2])], title=P)
    lines = line_chart([1.0, 2.0], [Series(P, [0.1, 0.2], [P, P])], title=P, x_fmt=lambda _: P)
    return str(bars + lines)


def page_case() -> str:
    section = Section("plain", P, [(P, P), ("missing", "—")], Markup(table([P], [[P, P]])))
    return render_report(P, [section], meta={P: P})


def python_helpers_case() -> str:
    """The macros a section not on a template of its own calls from Python."""
    parts = [value_html(P), num_html(P), skipped_records_html({"failed": [{"error": P}]})]
    return "".join(f"<p>{part}</p>" for part in parts)


CASES: dict[str, Callable[[], str]] = {
    "goal_success": goal_success_case,
    "goal_tracking": goal_tracking_case,
    "memory": memory_case,
    "goal_shift": goal_shift_case,
    "compare": compare_case,
    "evaluation": evaluation_case,
    "llm_usage": llm_usage_case,
    "simulation": simulation_case,
    "proactive": proactive_case,
    "charts": charts_case,
    "page": page_case,
    "python_helpers": python_helpers_case,
}


@pytest.fixture
def rendered(monkeypatch: pytest.MonkeyPatch) -> Iterator[set[str]]:
    """The names of the templates rendered (includes and imports too) while the test runs."""
    env, names = environment(), set[str]()
    load = env.get_template

    def recording(name: Any, *args: Any, **kwargs: Any) -> Any:
        names.add(str(name))
        return load(name, *args, **kwargs)

    monkeypatch.setattr(env, "get_template", recording)
    yield names


@pytest.mark.parametrize("name", CASES)
def test_a_payload_in_every_field_comes_out_escaped(name: str, rendered: set[str]) -> None:
    html = CASES[name]()
    check_escaped(html)
    assert rendered, "the case rendered no template"


def test_every_shipped_template_is_rendered_by_a_case(rendered: set[str]) -> None:
    env = environment()
    assert env.autoescape is True
    for case in CASES.values():
        check_escaped(case())
    assert set(env.list_templates()) <= rendered


def test_a_plain_string_body_is_shown_as_text_not_markup() -> None:
    html = render_report("t", [Section("raw", "Raw", [], P)])  # type: ignore[arg-type]
    check_escaped(html)
    section = html[html.index('<section id="raw"') :]
    assert str(escape(P)) in section


def test_a_tables_cells_are_text_parts_or_values_missing_marked_unless_free_text() -> None:
    """Each kind of cell the table macro takes, written as it always was."""
    na = '<span class="na" title="could not be computed">—</span>'
    row: list[Any] = ["x<y", ["50.0%", " (", "—", ")"], 3, "—"]
    head = "<thead><tr><th>a</th><th>b</th><th>c</th><th>d</th></tr></thead>"
    assert str(macro("table")(["a", "b", "c", "d"], [row], "k")) == (
        f'<table class="k">{head}<tbody><tr><td>x&lt;y</td><td>50.0% ({na})</td><td>3</td>'
        f"<td>{na}</td></tr></tbody></table>"
    )
    free = macro("table")(["a", "b", "c", "d"], [row, []], "data", False)
    assert str(free) == (
        f'<table class="data">{head}<tbody><tr><td>x&lt;y</td><td>50.0% (—)</td><td>3</td>'
        "<td>—</td></tr><tr></tr></tbody></table>"
    )
