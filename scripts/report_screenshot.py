"""The report's first screen as a headless-Chromium screenshot, and where its parts sit.

``make demo`` runs it on its report: what a reader sees before scrolling (the figures and how
far each can be trusted) is then a file to look at, ``report-first-screen.png``, beside the
report. It needs Debian's ``chromium`` and ``chromedriver`` (``make browser``); without them it
says so and writes nothing::

    python -m scripts.report_screenshot runs/demo/report.html runs/demo/report-first-screen.png
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections.abc import Sequence
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver

WIDTH, HEIGHT = 1280, 900
"""A laptop's first screen."""

LAYOUT = """
const top = el => Math.round(el.getBoundingClientRect().top + scrollY);
const figures = document.querySelector('#report-overview table.figures');
return {
  height: document.documentElement.scrollHeight,
  figures_table_top: figures ? top(figures) : null,
  open_details: document.querySelectorAll('details[open]').length,
  closed_details: document.querySelectorAll('details:not([open])').length,
  sections: [...document.querySelectorAll('main > section')].map(s => [s.id, top(s)]),
};
"""
"""What the script reports of the page: its height, where the figures table and each section
start, and how many drill-downs are open."""


def browser_paths() -> tuple[str, str] | None:
    """Debian's chromium and chromedriver on PATH; None when either is missing."""
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


def headless_chromium(
    chromium: str, driver: str, *, width: int = WIDTH, height: int = HEIGHT
) -> WebDriver:
    """Headless Chromium driven through ``driver`` (Selenium Manager never runs: no download)."""
    os.environ.setdefault("SE_AVOID_STATS", "true")
    os.environ.setdefault("SE_OFFLINE", "true")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    size = f"--window-size={width},{height}"
    flags = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             size, "--no-first-run", "--disable-extensions")  # fmt: skip
    for flag in flags:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


def page_layout(browser: WebDriver) -> dict[str, Any]:
    """Where the open page's parts sit (see :data:`LAYOUT`)."""
    found: dict[str, Any] = browser.execute_script(LAYOUT)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", help="a todeval report.html")
    parser.add_argument("png", help="where to write the screenshot")
    args = parser.parse_args(argv)
    paths = browser_paths()
    if paths is None:
        print("no screenshot: chromium and chromedriver are not on PATH (run `make browser`)")
        return 0
    browser = headless_chromium(*paths)
    try:
        browser.get(f"file://{os.path.abspath(args.report)}")
        layout = page_layout(browser)
        browser.save_screenshot(args.png)
    finally:
        browser.quit()
    print(
        f"wrote {args.png} (first {WIDTH}x{HEIGHT} screen): page {layout['height']} px tall, "
        f"figures table at y={layout['figures_table_top']}, "
        f"{layout['closed_details']} drill-downs closed, {layout['open_details']} open"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
