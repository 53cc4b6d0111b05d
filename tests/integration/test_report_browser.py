"""The HTML reports run no payload, in a real browser (issue 17, part 5).

``todeval evaluate`` runs on inputs written here, where a dialogue id, an utterance, a tool name
(so the reason of its transcript issue) and an LLM judge's name (its model, served by
``scripts/fault_server.py`` on 127.0.0.1) carry :data:`PAYLOADS`; ``todeval compare`` then sets
that run beside a run without the LLM judge and without the transcript. Both pages are opened
from ``file://`` in headless Chromium from Debian's packages (``make browser``), driven by
Selenium through Debian's chromedriver (its path is handed over, so Selenium Manager never runs
and nothing is downloaded). On each page: no payload ran (``window.__pwned`` stays undefined),
no element or handler was injected, every payload is shown as text, the browser logged no
error, and a screenshot is saved.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By

from scripts.fault_server import FaultServer
from scripts.report_screenshot import browser_paths as chromium_paths
from scripts.report_screenshot import headless_chromium, page_layout
from tests.integration.conftest import VENV_BIN, make_dialogue, subprocess_env

pytestmark = pytest.mark.integration

PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    '"><svg onload=window.__pwned=1>',
)
"""An element, a handler, and a break out of a double-quoted attribute (no comma: a judge
spec list is split on commas)."""
PAYLOAD = "".join(PAYLOADS)
DIALOGUE_ID = f"dlg-{PAYLOAD}"
TRANSCRIPT_ID = f"air-{PAYLOAD}"
UTTERANCE = f"How do I reset my VPN password? {PAYLOAD}"
TOOL = f"tool{PAYLOAD}"
JUDGE_MODEL = f"judge{PAYLOAD}"
SAMPLE_TRANSCRIPTS = Path(__file__).resolve().parents[2] / "data/samples/agent_transcripts.jsonl"
RUN_TIMEOUT_S = 600.0
"""Guards against a hang of the test only."""
PAGE_TIMEOUT_S = 60

INJECTED = """
const found = [];
for (const el of document.querySelectorAll('*')) {
  const tag = el.tagName.toLowerCase();
  if (['script', 'img', 'iframe', 'object', 'embed'].includes(tag)) found.push(tag);
  if (tag === 'svg' && !el.classList.contains('chart')) found.push('svg');
  for (const attr of el.attributes) {
    if (attr.name.startsWith('on')) found.push(tag + ' ' + attr.name);
  }
}
return found;
"""
"""Elements and handlers the report never writes itself (its charts are ``svg.chart``)."""


def browser_paths() -> tuple[str, str]:
    """Debian's chromium and chromedriver; skipped (an error in CI) when either is missing."""
    found = chromium_paths()
    if found is not None:
        return found
    reason = "chromium and chromedriver (Debian's chromium, chromium-driver) are not on PATH"
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI must have them (make browser): {reason}")
    pytest.skip(f"{reason}: run `make browser`")


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    """Headless Chromium with its console log kept, closed at the end of the module."""
    driver = headless_chromium(*browser_paths(), height=1600)
    driver.set_page_load_timeout(PAGE_TIMEOUT_S)
    try:
        yield driver
    finally:
        driver.quit()


def write_inputs(work: Path) -> tuple[Path, Path]:
    """A two-goal dialogue and a sample agent transcript, carrying the payloads."""
    dialogue = make_dialogue(DIALOGUE_ID, [0, 1])
    dialogue["turns"][0]["user_msg"] = UTTERANCE
    dialogues = work / "dialogues.jsonl"
    dialogues.write_text(json.dumps(dialogue) + "\n")
    transcript = json.loads(SAMPLE_TRANSCRIPTS.read_text().splitlines()[0])
    transcript["dialogue_id"] = TRANSCRIPT_ID
    calls = [call for m in transcript["messages"] for call in m.get("tool_calls") or []]
    assert calls, "the sample transcript has no tool call to rename"
    calls[0]["name"] = TOOL  # an unknown tool: a transcript issue whose reason names it
    transcripts = work / "transcripts.jsonl"
    transcripts.write_text(json.dumps(transcript) + "\n")
    return dialogues, transcripts


def todeval(work: Path, *args: str) -> None:
    done = subprocess.run(
        [str(VENV_BIN / "todeval"), *args],
        cwd=work,
        env=subprocess_env(work / "home", OPENAI_API_KEY="sk-browser-test"),
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``report.html`` of the run with the payloads, and ``compare.html`` of it against a run
    with local judges on the dialogues only."""
    work = tmp_path_factory.mktemp("report_browser")
    dialogues, transcripts = write_inputs(work)
    common = ("--checkpoints", ":memory:")
    with FaultServer(fault_rate=0.0) as server:
        spec = f"openai:{JUDGE_MODEL}@{server.base_url}"
        todeval(work, "evaluate", str(dialogues), str(transcripts), "--out", "a",
                "--judge", f"turn_quality=local,{spec}", *common)  # fmt: skip
        assert server.requests, "the LLM judge was never asked: its name is not tested"
    todeval(work, "evaluate", str(dialogues), "--out", "b", *common)
    todeval(work, "compare", "a", "b", "--out", "compare")
    return {"report": work / "a" / "report.html", "compare": work / "compare" / "compare.html"}


def page_text(driver: WebDriver) -> str:
    """The text a reader sees with every ``<details>`` opened."""
    for details in driver.find_elements(By.TAG_NAME, "details"):
        if details.get_attribute("open") is None:
            driver.execute_script("arguments[0].open = true;", details)
    text: str = driver.find_element(By.TAG_NAME, "body").text
    return text


def browser_log(driver: WebDriver) -> list[dict[str, Any]]:
    """The console entries logged since the last call (``goog:loggingPrefs``)."""
    entries: list[dict[str, Any]] = driver.get_log("browser")  # type: ignore[no-untyped-call]
    return entries


def open_page(driver: WebDriver, path: Path) -> None:
    browser_log(driver)  # drop what an earlier page logged
    driver.get(path.as_uri())
    assert driver.execute_script("return document.readyState") == "complete"


def check_page(driver: WebDriver, path: Path, shown: list[str], screenshot: Path) -> None:
    """Nothing ran or was injected, ``shown`` is on the page as text, the console is clean."""
    open_page(driver, path)
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    assert driver.execute_script(INJECTED) == []
    text = page_text(driver)
    for expected in shown:
        assert expected in text, f"{expected!r} is not shown as text"
    assert driver.execute_script("return typeof window.__pwned") == "undefined"
    severe = [entry for entry in browser_log(driver) if entry.get("level") == "SEVERE"]
    assert severe == [], severe
    assert driver.save_screenshot(str(screenshot))
    data = screenshot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 1000, len(data)


def test_the_evaluation_report_shows_every_payload_as_text_and_runs_none(
    browser: WebDriver, reports: dict[str, Path], tmp_path: Path
) -> None:
    html = reports["report"].read_text()
    assert "<script" not in html  # the page ships no script at all
    shown = [DIALOGUE_ID, TRANSCRIPT_ID, UTTERANCE, JUDGE_MODEL, f"unknown tool '{TOOL}'"]
    check_page(browser, reports["report"], shown, tmp_path / "report.png")


def test_the_compare_report_shows_every_payload_as_text_and_runs_none(
    browser: WebDriver, reports: dict[str, Path], tmp_path: Path
) -> None:
    # The transcript is in run A only; the LLM judge judged run A only, and a judge list is
    # shown as JSON (quotes escaped with a backslash).
    shown = [TRANSCRIPT_ID, json.dumps(JUDGE_MODEL)[1:-1]]
    check_page(browser, reports["compare"], shown, tmp_path / "compare.png")


def test_the_first_screen_of_the_demo_report_shows_every_figure_and_its_validity(
    browser: WebDriver, tmp_path: Path
) -> None:
    # Issue 31: the validity table sat at y 1,735 below a 42,000 px page of open drill-downs.
    samples = SAMPLE_TRANSCRIPTS.parent
    names = ("enterprise_dialogues.jsonl", "agent_transcripts.jsonl")
    inputs = [str(samples / name) for name in names]
    todeval(tmp_path, "evaluate", *inputs, "--out", "demo", "--checkpoints", ":memory:")
    open_page(browser, tmp_path / "demo" / "report.html")
    layout = page_layout(browser)
    assert layout["figures_table_top"] is not None and layout["figures_table_top"] < 600
    table = browser.find_element(By.CSS_SELECTOR, "#report-overview table.figures").text
    assert "Goal Success Rate" in table and "κ" in table  # the figure and how far to trust it
    assert layout["open_details"] == 0 and layout["closed_details"] > 0  # drill-downs folded
    # A link from the failed goals still lands on its dialogue, opened.
    browser.find_element(By.CSS_SELECTOR, "#goal-success table.data a[href^='#']").click()
    assert browser.execute_script("return document.querySelectorAll('details[open]').length") == 1
