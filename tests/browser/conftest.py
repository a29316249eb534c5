"""Real-browser tests: Playwright's sync API driving Debian's chromium.

Skipped with a reason when /usr/bin/chromium is missing, unless PI_REQUIRE_BROWSER=1
(CI), which turns the skip into a failure.
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
# Playwright's sync API runs an event loop; Django then refuses sync DB calls from
# the test thread unless told this is fine (it is: one thread at a time).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        reason = (
            f"{CHROMIUM} is missing: install it with "
            "`apt-get update && apt-get install -y chromium`"
        )
        if os.environ.get("PI_REQUIRE_BROWSER") == "1":
            pytest.fail(reason + " (PI_REQUIRE_BROWSER=1)")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--no-first-run",
            ],
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def new_page(browser: Any) -> Iterator[Any]:
    """`new_page(color_scheme="dark")` → a page in a fresh context; all closed after."""
    contexts = []

    def make(**options: Any) -> Any:
        context = browser.new_context(
            viewport={"width": 1400, "height": 900}, **options
        )
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    yield make
    for context in contexts:
        context.close()


def screenshot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def log_in(page: Any, base_url: str, username: str, password: str) -> None:
    page.goto(f"{base_url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base_url}/")
