"""Range totals read daily rollups for whole days and hourly ones at the range's start.

The same data is summed both ways: the hourly rows alone (what the pages read before
the daily level existed) and the pages' mixed path, for starts on, just before and
just after a UTC midnight, and with lines stamped in the future. Every count ingest
wrote goes through `store.rollups_add`, so the daily rows are ingest's own.
"""

import random
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest
from django.db.models import Q, Sum

from pi_dashboard.fleet.models import Host, HostModel, Model
from pi_dashboard.front.pages import failures, overview
from pi_dashboard.ingest import store
from pi_dashboard.ingest.models import Rollup

NOW = datetime(2026, 7, 14, 16, 40, tzinfo=UTC)
KEYS = (*failures.FAILURE_KEYS, failures.REPAIRED_KEY, "provider:rate_limit")


@pytest.fixture
def cells(db: None) -> list[HostModel]:
    """3 hosts × 2 models, hourly counts over 32 days back and 2 days ahead."""
    models = [
        Model.objects.create(key=f"p/m{m}", provider="p", model_id=f"m{m}")
        for m in range(2)
    ]
    made = []
    rng = random.Random(4)
    for h in range(3):
        host = Host.objects.create(pi_id=f"host-{h}")
        for model in models:
            made.append(HostModel.objects.create(host=host, model=model, entry={}))
        counts: Counter[store.RollupCell] = Counter()
        for hour in range(-48, 32 * 24):
            bucket = NOW.replace(minute=0) - timedelta(hours=hour)
            for model in (*models, None):
                if rng.random() < 0.4:
                    key = rng.choice(KEYS)
                    counts[(bucket, model.pk if model else None, "outcome", key)] += 1
        # In several batches, as ingest would add them.
        items = list(counts.items())
        for start in range(0, len(items), 500):
            store.rollups_add(host.pk, dict(items[start : start + 500]))
    return made


def hourly_only(
    since: datetime, until: datetime | None = None
) -> dict[tuple[int, int | None], tuple[int, int]]:
    """Failures and repairs per cell from the hourly rows alone."""
    hours = Rollup.objects.filter(dimension="outcome", bucket__gte=since)
    if until is not None:
        hours = hours.filter(bucket__lt=until)
    rows = hours.values("host_id", "model_id").annotate(
        f=Sum("count", filter=Q(key__in=failures.FAILURE_KEYS)),
        r=Sum("count", filter=Q(key=failures.REPAIRED_KEY)),
    )
    return {
        (row["host_id"], row["model_id"]): (row["f"] or 0, row["r"] or 0)
        for row in rows
        if row["f"] or row["r"]
    }


MIDNIGHT = datetime(2026, 7, 14, tzinfo=UTC)
STARTS = [
    MIDNIGHT,  # on a midnight: days only
    MIDNIGHT - timedelta(hours=1),  # one hour before: 1 hourly row, then days
    MIDNIGHT + timedelta(hours=1),  # just after: 23 hourly rows, then days
    MIDNIGHT - timedelta(days=6, hours=7),  # the 7 d range's shape
    MIDNIGHT - timedelta(days=29, hours=23),
    NOW.replace(minute=0) + timedelta(hours=3),  # in the future: hours only
]


@pytest.mark.parametrize("since", STARTS, ids=lambda s: s.strftime("%dT%H"))
def test_counts_by_cell_equal_the_hourly_sums(cells: list[HostModel], since: datetime):
    mixed = {
        cell: (c.failures, c.repaired)
        for cell, c in failures.counts_by_cell(since=since).items()
        if c.failures or c.repaired
    }
    assert mixed == hourly_only(since)
    assert mixed  # the data reaches every start


@pytest.mark.parametrize("since", STARTS, ids=lambda s: s.strftime("%dT%H"))
def test_overview_totals_equal_the_hourly_sums(cells: list[HostModel], since: datetime):
    expected = {cell: f for cell, (f, _) in hourly_only(since).items() if cell[1]}
    got = {(h, m): n for h, m, _, n in overview.cell_totals({}, since) if n}
    assert got == expected


# Custom From/To ranges: whole days, or cut at the end of now's hour.
SPANS = [
    (MIDNIGHT - timedelta(days=20), MIDNIGHT - timedelta(days=10)),
    (MIDNIGHT - timedelta(days=3), MIDNIGHT - timedelta(days=2)),
    (MIDNIGHT - timedelta(days=5), NOW.replace(minute=0) + timedelta(hours=1)),
    (MIDNIGHT + timedelta(hours=2), MIDNIGHT + timedelta(hours=9)),  # within a day
]


@pytest.mark.parametrize(("since", "until"), SPANS, ids=lambda s: s.strftime("%dT%H"))
def test_bounded_counts_equal_the_hourly_sums(
    cells: list[HostModel], since: datetime, until: datetime
) -> None:
    mixed = {
        cell: (c.failures, c.repaired)
        for cell, c in failures.counts_by_cell(since=since, until=until).items()
        if c.failures or c.repaired
    }
    assert mixed == hourly_only(since, until)
    assert mixed != hourly_only(since)  # the end cut something off
    expected = {c: f for c, (f, _) in hourly_only(since, until).items() if c[1]}
    got = {(h, m): n for h, m, _, n in overview.cell_totals({}, since, until) if n}
    assert got == expected


def test_narrowed_counts_equal_the_hourly_sums(cells: list[HostModel]) -> None:
    since = MIDNIGHT - timedelta(days=2, hours=5)
    host, model = cells[0].host_id, cells[0].model_id
    everything = hourly_only(since)
    assert failures.counts_by_cell(since=since, host_ids=[host]).keys() == {
        cell for cell in everything if cell[0] == host
    }
    narrowed = failures.counts_by_cell(since=since, host_ids=[host], model_ids=[model])
    assert {c: (n.failures, n.repaired) for c, n in narrowed.items()} == {
        (host, model): everything[(host, model)]
    }


def test_first_midnight() -> None:
    assert failures.first_midnight(MIDNIGHT) == MIDNIGHT
    later = MIDNIGHT + timedelta(days=1)
    assert failures.first_midnight(MIDNIGHT + timedelta(hours=1)) == later
    assert failures.first_midnight(later - timedelta(hours=1)) == later
