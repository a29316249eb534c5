"""Charts fit their data and carry markers (issue 12 item 13)."""

import json
import re
from datetime import timedelta

from django.utils import timezone

from pi_dashboard.fleet.models import Change, ChangeKind
from pi_dashboard.front.pages.chart_fit import fitted_range
from pi_dashboard.front.pages.ranges import RANGES
from tests.fleet.test_pages import AMD, add_rollups, login, seed_fleet
from tests.fleet.test_pages_actions import MODEL, PAGE


def test_a_day_with_data_only_at_its_end_is_drawn_over_that_end() -> None:
    now = timezone.now()
    fitted = fitted_range(RANGES["24h"], now - timedelta(hours=2), now)
    assert (fitted.hours, fitted.bucket_hours) == (3, 1)


def test_buckets_grow_with_the_span_the_data_covers() -> None:
    now = timezone.now()
    fitted = fitted_range(RANGES["90d"], now - timedelta(days=20), now)
    assert fitted.bucket_hours == 12
    assert fitted.hours / fitted.bucket_hours <= 48
    assert fitted_range(RANGES["7d"], None, now) == RANGES["7d"]


def chart_data(body: str, dom: str) -> dict:
    raw = re.search(
        rf'<script id="chart-{dom}" type="application/json">(.*?)</script>', body, re.S
    )
    assert raw, f"no chart {dom}"
    return json.loads(raw.group(1))


def test_host_model_page_has_charts_with_markers(
    client, operator, db, pi_fixtures
) -> None:
    fleet = seed_fleet(pi_fixtures)
    hm = fleet[f"{AMD}|{MODEL}"]
    add_rollups(hm, {("repair_mode", "numberFromString"): 4}, hours_ago=3)
    add_rollups(hm, {("repair_mode", "numberFromString"): 2}, hours_ago=1)
    Change.objects.create(
        host_model=hm,
        kind=ChangeKind.RULE_ADDED,
        at=timezone.now() - timedelta(hours=2),
        mode="numberFromString",
    )
    login(client, operator).post(
        "/actions/remove-rule/",
        {"host": AMD, "model": MODEL, "mode": "numberFromString"},
    )
    body = client.get(PAGE).content.decode()
    assert "Repair modes applied" in body
    data = chart_data(body, "repair-modes")
    assert data["bucket_hours"] == 1
    assert len(data["x"]) == 4  # from the first data's hour, not 24 flat hours
    assert data["series"][0] == {
        "label": "numberFromString",
        "values": [4, 0, 2, 0],
        "total": 6,
    }
    labels = [(m["label"], m["by"]) for m in data["markers"]]
    assert ("rule added numberFromString", "pi") in labels
    assert ("remove rule (operator)", "operator") in labels
    assert '<ul class="chart-keys">' in body  # a written legend
    assert "2 markers on the time axis" in body
