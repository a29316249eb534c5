"""Custom From/To ranges on the chart pages (issue 12 item 13, journeys2 item 1).

Through the pages: the figures and charts cover exactly the days asked for, the
range stays in every link and form of the page, and a range that cannot be read is
said so on the page (200, the default range), never a 500.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from pi_dashboard.fleet.models import HostModel
from tests.fleet.test_pages import AMD, add_rollups, login, seed_fleet
from tests.fleet.test_pages_actions import MODEL, PAGE
from tests.front.test_charts import chart_data

MODEL_PAGE = f"/models/{MODEL}/"
HOST_PAGE = f"/hosts/{AMD}/"
PAGES = ["/", MODEL_PAGE, HOST_PAGE, PAGE]


@pytest.fixture
def hm(db, pi_fixtures) -> HostModel:
    """Failures 40 days ago (7 of them) and 1 hour ago (2), on one host × model."""
    hm = seed_fleet(pi_fixtures)[f"{AMD}|{MODEL}"]
    add_rollups(hm, {("outcome", "execution:failed"): 7}, hours_ago=40 * 24)
    add_rollups(hm, {("repair_mode", "numberFromString"): 3}, hours_ago=40 * 24)
    add_rollups(hm, {("outcome", "execution:failed"): 2}, hours_ago=1)
    add_rollups(hm, {("repair_mode", "numberFromString"): 5}, hours_ago=1)
    return hm


def days_ago(n: int) -> str:
    return (timezone.localdate() - timedelta(days=n)).isoformat()


def test_a_custom_range_shows_only_its_days_on_every_chart_page(
    client, viewer, hm
) -> None:
    login(client, viewer)
    query = f"?since={days_ago(45)}&until={days_ago(35)}"
    body = client.get(PAGE + query).content.decode()
    first = timezone.localdate() - timedelta(days=45)
    assert f"failures in {first.day} {first:%b %Y} – " in body
    assert '<div class="value">7</div>' in body  # the old 7, not the recent 2
    data = chart_data(body, "repair-modes")
    assert data["series"][0]["total"] == 3
    start, end = data["x"][0], data["x"][-1] + data["bucket_hours"] * 3600
    assert end - start <= 11 * 86400  # inside the 11 days asked for
    assert len(data["x"]) <= 48  # buckets sized to the range
    # The range in words, and the switcher shows it as the current one.
    label = client.get(MODEL_PAGE + query).content.decode()
    assert f"cover {first.day} {first:%b %Y} – " in label
    assert '<summary aria-current="true">' in label
    for page in PAGES:
        response = client.get(page + query)
        assert response.status_code == 200, page
    # The presets still show the recent data only.
    recent = client.get(PAGE + "?range=24h").content.decode()
    assert chart_data(recent, "repair-modes")["series"][0]["total"] == 5


def test_ninety_days_and_a_long_custom_range_reach_the_old_data(
    client, viewer, hm
) -> None:
    login(client, viewer)
    for query in ("?range=90d", f"?since={days_ago(120)}"):
        body = client.get(PAGE + query).content.decode()
        data = chart_data(body, "repair-modes")
        assert data["series"][0]["total"] == 8, query
        assert len(data["x"]) <= 48, query


def test_the_custom_range_is_kept_in_links_forms_and_reloads(
    client, viewer, hm
) -> None:
    login(client, viewer)
    since, until = days_ago(45), days_ago(35)
    kept = f"since={since}&amp;until={until}"
    body = client.get(f"{PAGE}?since={since}&until={until}").content.decode()
    assert f'hx-get="{PAGE}?{kept}"' in body  # the state's reload keeps it
    assert f'<input type="hidden" name="since" value="{since}">' in body  # events
    assert f'href="/models/?{kept}"' in body  # the top navigation
    overview = client.get(f"/?since={since}&until={until}&q=amd").content.decode()
    assert f'href="/?{kept}">Reset</a>' in overview
    # A preset link drops the custom days but keeps the other filters.
    assert 'href="?q=amd&amp;range=7d"' in overview
    # The custom form keeps the other filters too.
    assert '<input type="hidden" name="q" value="amd">' in overview


BAD = {
    "since=2026-13-45": "From: Enter a valid date.",
    "since=yesterday&until=2026-01-01": "From: Enter a valid date.",
    "until=2026-01-01": "Give a “From” day as well.",
    f"since={days_ago(3)}&until={days_ago(5)}": "“From” is after “To”.",
    f"since={days_ago(-2)}": "“From” is in the future.",
    f"since={days_ago(500)}": "older data is not kept",
    "since=%00": "From: Enter a valid date.",
}


@pytest.mark.parametrize("query", list(BAD), ids=range(len(BAD)))
def test_a_bad_custom_range_is_said_on_the_page_never_a_500(
    client, viewer, hm, query: str
) -> None:
    login(client, viewer)
    for page in PAGES:
        response = client.get(f"{page}?{query}")
        if "%00" in query:  # the request guard refuses NUL before any page
            assert response.status_code == 400, page
            continue
        assert response.status_code == 200, page
        body = response.content.decode()
        assert 'role="alert">Custom range not shown:' in body, page
        assert BAD[query] in body, page
        assert "Showing the last 24 h instead." in body
        assert '<details class="range-custom" open>' in body
