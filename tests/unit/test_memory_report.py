"""The memory report section shows the setting, both JGA readings and the comparison table."""

from __future__ import annotations

from typing import Any

from todeval.evals.metrics.memory.table import baseline_table
from todeval.evals.report.memory import memory_section


def _row(label: str, paper: str, **figures: Any) -> dict[str, Any]:
    return {"configuration": label, "paper": paper, "items": 4, **figures}


ROWS = [
    _row("MAP", "Tables 3-4 (w/ MAP)", recall_at_5=0.75, slot_accuracy=0.5, jga=0.25,
         jga_mention=0.5),
    _row("summaries (ChatCite)", "Table 4, App. D.1", slot_accuracy=None, jga=None,
         reasons=[{"reason": "reader: no session summaries <local>", "items": 4}]),
]  # fmt: skip


def test_the_section_names_the_setting_and_both_jga_readings() -> None:
    summary = {"items": 4, "jga": 0.25, "jga_mention": 0.5, "configuration": {
        "setting": "qa_rag", "activation": "intent_key"}}  # fmt: skip
    body = memory_section(summary, []).body
    assert "Setting: qa_rag, activation: intent_key." in body
    assert "JGA by mention" in body and "50.0%" in body and "25.0%" in body
    assert "comparison settings" not in body  # no table without baselines


def test_the_section_tables_the_comparison_settings_with_why_a_row_is_empty() -> None:
    body = memory_section(ROWS[0] | {"baselines": ROWS}, []).body
    assert "MAP and the paper's comparison settings" in body
    assert "<td>summaries (ChatCite)</td><td>Table 4, App. D.1</td><td>4</td>" in body
    assert "<td>0.250</td>" in body  # MAP's JGA
    # The reason is escaped, never raw HTML.
    assert "no session summaries &lt;local&gt;" in body and "<local>" not in body


def test_the_text_table_prints_n_a_and_the_reason() -> None:
    table = baseline_table(ROWS, title="bench (a)")
    lines = table.splitlines()
    assert lines[0] == "bench (a)" and lines[1].startswith("configuration")
    assert lines[2].split()[:4] == ["MAP", "4", "0.750", "0.500"]
    assert "n/a" in lines[3]
    assert lines[-1] == "  summaries (ChatCite): reader: no session summaries <local>"
