"""``todeval evaluate`` on broken input: the run goes on, and every problem is accounted for.

A transcript with no messages (issue 17: it used to stop the run with a pydantic traceback and
leave results.jsonl empty) or with nothing but the agent speaking is skipped, named by its id
and field; problems inside readable transcripts (unknown tools, results answering no call,
arguments that are not a JSON object) are counted in summary.json, announced on stdout
and listed in the report, as are the skipped records.
"""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from todeval.cli.main import main


def _call(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": "",
            "tool_calls": [{"id": call_id, "name": name, "arguments": arguments}]}  # fmt: skip


def _result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": '{"status": "delivered"}'}


ASK = {"role": "user", "content": "What's the status of order #W1?"}
ANSWER = {"role": "assistant", "content": "Order #W1 was delivered."}
TRANSCRIPTS: list[Any] = [
    # Retail's tool list is known from the domain: teleport_money is not in it.
    {"id": "unknown-tool", "task_id": "t1", "domain": "retail",
     "messages": [ASK, _call("k1", "teleport_money", {}), _result("k1"), ANSWER]},
    {"id": "empty", "task_id": "t1", "messages": []},
    # The line's own tool list; a result answering no call; arguments that are not an object.
    {"id": "orphan-and-bad-arguments", "task_id": "t1",
     "tools": [{"name": "get_order_details", "parameters": {"type": "object", "properties": {}}}],
     "messages": [ASK, _call("k1", "get_order_details", "{order_id: #W1"), _result("k1"),
                  _result("k9"), ANSWER]},
    {"id": "agent-only", "task_id": "t1", "messages": [ANSWER]},
    # No tool list anywhere: the names cannot be checked, and one issue says so.
    {"id": "tools-unknown", "task_id": "t1",
     "messages": [ASK, _call("k1", "get_order_details", {"order_id": "#W1"}), _result("k1"),
                  ANSWER]},
]  # fmt: skip


@pytest.fixture
def run(tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    transcripts = tmp_path / "transcripts.jsonl"
    transcripts.write_text("".join(json.dumps(t) + "\n" for t in TRANSCRIPTS))
    out = tmp_path / "run"
    code = main(["evaluate", str(transcripts), "--config", str(config),
                 "--checkpoints", ":memory:", "--out", str(out)])  # fmt: skip
    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    report = (out / "report.html").read_text()
    return {"code": code, "lines": lines, "summary": summary, "report": report,
            "stdout": capsys.readouterr().out}  # fmt: skip


def test_malformed_transcripts_are_skipped_by_id_and_field_and_the_rest_evaluated(
    run: dict[str, Any],
) -> None:
    assert run["code"] == 0
    assert [line["record_id"] for line in run["lines"]] == [
        "unknown-tool",
        "orphan-and-bad-arguments",
        "tools-unknown",
    ]
    assert all(line["status"] == "done" for line in run["lines"])
    skipped = {(row["dialogue_id"], row["field"]) for row in run["summary"]["skipped"]}
    assert skipped == {("empty", "messages"), ("agent-only", "messages")}
    assert run["summary"]["counts"]["skipped_records"] == 2
    assert "2 unreadable records skipped" in run["stdout"]


def test_transcript_issues_are_counted_in_the_summary_and_announced(run: dict[str, Any]) -> None:
    summary = run["summary"]
    issues = {(i["dialogue_id"], i["field"]) for i in summary["transcript_issues"]}
    assert {
        ("unknown-tool", "messages.1.tool_calls.0.name"),
        ("orphan-and-bad-arguments", "messages.1.tool_calls.0.arguments"),
        ("orphan-and-bad-arguments", "messages.3"),  # k9 answers no call
        ("tools-unknown", "tools"),
    } <= issues
    # Unknown tools are named only where the tools are known; get_order_details is known.
    assert not any(field.endswith(".name") for who, field in issues if who != "unknown-tool")
    # Every transcript here lacks a task: each also says TSR was not computed.
    assert {who for who, field in issues if field == "task_id"} == {
        "unknown-tool",
        "orphan-and-bad-arguments",
        "tools-unknown",
    }
    assert summary["counts"]["transcript_issues"] == len(summary["transcript_issues"]) == 7
    assert f"note: {len(issues)} transcript issues" in run["stdout"]


def test_skipped_records_and_transcript_issues_are_shown_in_the_report(
    run: dict[str, Any],
) -> None:
    text = html.unescape(" ".join(re.sub(r"<[^>]+>", " ", run["report"]).split()))
    assert "7 transcript issues" in text and "2 skipped" in text
    for issue in run["summary"]["transcript_issues"]:
        row = f"{issue['dialogue_id']} {issue['field']} {issue['message']}"
        assert row in text, row
    for skipped in run["summary"]["skipped"]:
        assert f"{skipped['dialogue_id']} {skipped['field']}" in text


def test_transcripts_given_twice_are_scored_once_and_the_run_compares(
    tmp_path: Path, config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    transcripts = tmp_path / "transcripts.jsonl"
    transcripts.write_text("".join(json.dumps(t) + "\n" for t in TRANSCRIPTS))
    copy = tmp_path / "copy.jsonl"
    copy.write_text(transcripts.read_text())
    runs = []
    for name, inputs in (("once", [transcripts]), ("twice", [transcripts, copy])):
        out = tmp_path / name
        args = ["evaluate", *map(str, inputs), "--config", str(config), "--checkpoints",
                ":memory:", "--out", str(out), "--suite", "goal_shift"]  # fmt: skip
        assert main(args) == 0
        runs.append(out)
    lines = [json.loads(x) for x in (runs[1] / "results.jsonl").read_text().splitlines()]
    assert [line["record_id"] for line in lines] == [
        "unknown-tool",
        "orphan-and-bad-arguments",
        "tools-unknown",
    ]
    summary = json.loads((runs[1] / "summary.json").read_text())
    assert summary["duplicate_records"]["count"] == 3
    assert "3 records repeated an earlier one exactly" in capsys.readouterr().out
    # Each record once: `todeval compare` joins the runs by record id.
    assert main(["compare", str(runs[0]), str(runs[1]), "--resamples", "20"]) == 0
    assert "3 records in both runs, 0 only in A, 0 only in B" in capsys.readouterr().out
