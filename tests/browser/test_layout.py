"""Every page at 390 px and 1400 px, in a real browser (issue 12 items 2, 9, 15).

At phone width nothing scrolls sideways (wide tables scroll inside their own box);
at 1400 px the fleet matrix's last column is whole. The corpus page and a refused
form are looked at after each action.
"""

import re
from pathlib import Path
from typing import Any

import pytest

from pi_dashboard.probes import services as probe_services
from tests.browser.conftest import screenshot
from tests.fleet.test_pages import AMD, seed_fleet
from tests.ingest.support import AgentClient, file_lines, fingerprint_of

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CORPUS_HOST = "apple-m3-max-16c-128g"
MODEL = "openai/gpt-5.1"
OVERFLOW = """() => {
  const width = document.documentElement.clientWidth;
  const wide = [...document.querySelectorAll('body *')].filter((el) => {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right <= width + 1) return false;
    // Inside a box that scrolls on its own (or is hidden): fine.
    for (let up = el.parentElement; up; up = up.parentElement) {
      const style = getComputedStyle(up);
      if (['auto', 'scroll', 'hidden'].includes(style.overflowX)) return false;
    }
    return true;
  });
  return {
    scroll: document.documentElement.scrollWidth, width,
    culprits: wide.slice(0, 5).map((el) =>
      el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (el.className && typeof el.className === 'string'
        ? '.' + el.className.split(' ').join('.') : '')),
  };
}"""


@pytest.fixture
def full_site(pi_fixtures: Path) -> dict[str, Any]:
    seed_fleet(pi_fixtures)
    host_dir = pi_fixtures / CORPUS_HOST
    agent = AgentClient.enroll()
    agent.heartbeat(fingerprint_of(host_dir))
    agent.lines("corpus", file_lines(host_dir / "failure-corpus.jsonl"))
    endpoint = probe_services.endpoint_create(
        data=probe_services.EndpointData(
            name="local llama",
            base_url="http://127.0.0.1:9/v1",
            server_model="m",
            model_key="llamacpp/glm-4.6",
            tags=["local"],
        )
    )
    schedule = probe_services.schedule_save(
        schedule=None, data=probe_services.ScheduleData(name="hourly"), user=None
    )
    return {"endpoint": endpoint.pk, "schedule": schedule.pk}


def pages(ids: dict[str, Any]) -> list[str]:
    return [
        "/",
        "/?view=list",
        "/models/",
        f"/models/{MODEL}/",
        "/hosts/",
        f"/hosts/{AMD}/",
        f"/hosts/{AMD}/models/{MODEL}/",
        "/corpus/?since=2026-01-01",
        "/commands/",
        "/audit/",
        "/probes/",
        f"/probes/endpoints/{ids['endpoint']}/",
        "/probes/endpoints/new/",
        "/probes/runs/",
        "/probes/drift/",
        "/probes/schedules/",
        f"/probes/schedules/{ids['schedule']}/edit/",
        "/alerts/channels/",
        "/agents/",
        "/users/",
        "/account/tokens/",
    ]


def admin_page(browser_page: Any, live_server: Any, admin_user: Any) -> Any:
    browser_page.goto(f"{live_server.url}/login/")
    browser_page.fill("input[name=username]", admin_user.username)
    browser_page.fill("input[name=password]", "pw-" + admin_user.username)
    browser_page.click("button[type=submit]")
    browser_page.wait_for_url(f"{live_server.url}/")
    return browser_page


@pytest.mark.timeout(180)
def test_no_page_scrolls_sideways_at_390px(
    live_server, new_page, admin_user, full_site
) -> None:
    page = admin_page(new_page(), live_server, admin_user)
    page.set_viewport_size({"width": 390, "height": 844})
    failures = {}
    for url in pages(full_site):
        response = page.goto(live_server.url + url)
        assert response is not None
        assert response.status == 200, url
        measured = page.evaluate(OVERFLOW)
        if measured["scroll"] > measured["width"] or measured["culprits"]:
            failures[url] = measured
            screenshot(page, "390-" + url.strip("/").replace("/", "_")[:60])
    assert failures == {}, "\n".join(f"{u}: {m}" for u, m in failures.items())


@pytest.mark.timeout(60)
def test_matrix_last_column_is_whole_at_1400px(
    live_server, new_page, admin_user, full_site
) -> None:
    page = admin_page(new_page(), live_server, admin_user)
    page.goto(live_server.url + "/")
    clipped = page.evaluate(
        """() => {
          const table = document.querySelector('table');
          const cells = [...table.querySelectorAll('tr > :last-child')];
          let box = table.parentElement;
          while (box && getComputedStyle(box).overflowX === 'visible') {
            box = box.parentElement;
          }
          const edge = Math.min(
            (box || document.documentElement).getBoundingClientRect().right,
            document.documentElement.clientWidth);
          // Past the edge, or content wider than its own cell (cut off).
          return cells.filter((c) => c.getBoundingClientRect().right > edge + 1
            || [...c.querySelectorAll('*')].some(
              (inner) => inner.getBoundingClientRect().right
                > c.getBoundingClientRect().right + 1)).length;
        }"""
    )
    screenshot(page, "1400-matrix")
    assert clipped == 0


@pytest.mark.timeout(90)
def test_schedule_form_by_kind_and_a_refused_value(
    live_server, new_page, admin_user, full_site
) -> None:
    """Items 2 and 12: fields follow the kind; an out-of-range interval is an error
    on the whole, intact page (the reported 500)."""
    from playwright.sync_api import expect

    page = admin_page(new_page(), live_server, admin_user)
    page.goto(live_server.url + "/probes/schedules/")
    every = page.locator("[data-show-when='kind=interval']")
    cron = page.locator("[data-show-when='kind=crontab']")
    expect(every).to_be_visible()
    expect(cron).to_be_hidden()
    page.select_option("select[name=kind]", "crontab")
    expect(every).to_be_hidden()
    expect(cron).to_be_visible()
    page.select_option("select[name=kind]", "interval")
    page.fill("input[name=name]", "too slow")
    page.fill("input[name=every_seconds]", "999999999999999")
    # The browser's own max check would stop the post; the server must cope anyway.
    page.evaluate("document.querySelector('input[name=every_seconds]').max = ''")
    page.get_by_role("button", name="Create schedule").click()
    expect(page.locator(".errorlist")).to_contain_text("less than or equal to")
    expect(page.get_by_role("heading", name="Probe schedules")).to_be_visible()
    expect(page.locator("table.data").first).to_contain_text("hourly")
    screenshot(page, "schedule-refused-interval")


@pytest.mark.timeout(90)
def test_failure_corpus_page_after_each_filter(
    live_server, new_page, admin_user, full_site
) -> None:
    """Item 15: the corpus page, then filtered by model and by time."""
    from playwright.sync_api import expect

    page = admin_page(new_page(), live_server, admin_user)
    page.get_by_role("link", name="Failure corpus").click()
    expect(page.get_by_role("heading", name="Failure corpus", level=1)).to_be_visible()
    # Default range (30 d): the fixture's months-old lines are not in it.
    expect(page.locator("section[aria-labelledby=shapes-h]")).to_contain_text(
        "No validation bounces in this selection."
    )
    page.fill("input[name=since]", "2026-01-01")
    page.get_by_role("button", name="Filter").click()
    shapes = page.locator("table#shapes tbody tr")
    expect(shapes.first).to_be_visible()
    all_shapes = shapes.count()
    expect(shapes.first.locator(".badge")).to_have_text("unfixed")
    expect(page.locator("table#execution tbody tr").first).to_be_visible()
    expect(page.locator("table#provider")).to_contain_text("overloaded")
    page.select_option("select[name=model]", "ollama/gpt-oss:20b")
    page.get_by_role("button", name="Filter").click()
    expect(page.locator("select[name=model]")).to_have_value("ollama/gpt-oss:20b")
    assert page.locator("table#shapes tbody tr").count() < all_shapes
    export = page.get_by_role("link", name="Export failure-corpus.jsonl")
    assert "model=ollama" in (export.get_attribute("href") or "")
    screenshot(page, "failure-corpus-filtered")


@pytest.mark.timeout(90)
def test_host_model_charts_are_drawn_with_legends_and_markers(
    live_server, new_page, admin_user, full_site
) -> None:
    """Item 13: the host × model page has charts; the legend is on the page, not
    only on hover, and markers are listed; 90 d is a range in the URL."""
    from datetime import timedelta

    from django.utils import timezone
    from playwright.sync_api import expect

    from pi_dashboard.fleet.models import Change, ChangeKind, HostModel
    from tests.fleet.test_pages import add_rollups

    hm = HostModel.objects.get(host__pi_id=AMD, model__key=MODEL)
    add_rollups(hm, {("repair_mode", "numberFromString"): 5}, hours_ago=30 * 24)
    add_rollups(hm, {("phase", "execution"): 3}, hours_ago=2)
    Change.objects.create(
        host_model=hm,
        kind=ChangeKind.RULE_ADDED,
        at=timezone.now() - timedelta(days=20),
        mode="numberFromString",
    )
    page = admin_page(new_page(), live_server, admin_user)
    page.goto(f"{live_server.url}/hosts/{AMD}/models/{MODEL}/")
    page.get_by_role("link", name="90 d").click()
    expect(page).to_have_url(re.compile(r"range=90d"))
    chart = page.locator(
        "section", has=page.get_by_role("heading", name="Repair modes applied")
    )
    expect(chart.locator("canvas")).to_have_count(1)
    expect(chart.locator(".chart-keys li")).to_contain_text(["numberFromString"])
    expect(chart.locator(".chart-legend")).to_contain_text("per 24 h")
    expect(chart.locator(".chart-markers summary")).to_contain_text("1 marker")
    phases = page.locator(
        "section", has=page.get_by_role("heading", name="Execution failures by phase")
    )
    expect(phases.locator(".chart-keys li")).to_contain_text(["execution"])
    screenshot(page, "host-model-charts-90d")


@pytest.mark.timeout(90)
def test_custom_from_to_range_in_the_url_and_its_errors(
    live_server, new_page, admin_user, full_site
) -> None:
    """journeys2 item 1: From/To beside the presets, kept in the URL; the charts
    cover those days; an inverted range is said on the page, which still fits 390 px."""
    from datetime import timedelta

    from django.utils import timezone
    from playwright.sync_api import expect

    from pi_dashboard.fleet.models import HostModel
    from tests.fleet.test_pages import add_rollups

    hm = HostModel.objects.get(host__pi_id=AMD, model__key=MODEL)
    add_rollups(hm, {("repair_mode", "numberFromString"): 5}, hours_ago=30 * 24)
    add_rollups(hm, {("repair_mode", "bareSingleArg"): 3}, hours_ago=2)
    today = timezone.localdate()
    since, until = today - timedelta(days=35), today - timedelta(days=25)
    page = admin_page(new_page(), live_server, admin_user)
    page.goto(f"{live_server.url}/hosts/{AMD}/models/{MODEL}/")
    page.locator(".range-custom summary").click()
    page.fill("input[name=since]", since.isoformat())
    page.fill("input[name=until]", until.isoformat())
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(rf"since={since}&until={until}"))
    expect(page.locator(".range-custom summary")).to_have_attribute(
        "aria-current", "true"
    )
    chart = page.locator(
        "section", has=page.get_by_role("heading", name="Repair modes applied")
    )
    expect(chart.locator("canvas")).to_have_count(1)
    expect(chart.locator(".chart-keys li")).to_have_text(["numberFromString 5"])
    # Inverted: the page says why, in the open From/To form, and shows 24 h.
    page.locator(".range-custom summary").click()
    page.fill("input[name=since]", until.isoformat())
    page.fill("input[name=until]", since.isoformat())
    page.get_by_role("button", name="Show").click()
    alert = page.locator(".range-custom [role=alert]")
    expect(alert).to_be_visible()
    expect(alert).to_contain_text("“From” is after “To”.")
    expect(chart.locator(".chart-keys li")).to_have_text(["bareSingleArg 3"])
    # On a phone, loaded at that width (charts size themselves when drawn).
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(alert).to_be_visible()
    expect(chart.locator("canvas")).to_have_count(1)
    measured = page.evaluate(OVERFLOW)
    screenshot(page, "390-custom-range-error")
    assert measured["scroll"] <= measured["width"], measured
    assert measured["culprits"] == [], measured
