"""The data migration fills daily rollups from hourly rows exactly as ingest would."""

import importlib
from datetime import UTC, datetime, timedelta

from django.db import connection

from pi_dashboard.fleet.models import Host, Model
from pi_dashboard.ingest.models import DailyRollup, Rollup

backfill = importlib.import_module(
    "pi_dashboard.ingest.migrations.0007_daily_rollup_backfill"
)


def test_backfill_sums_each_utc_day_of_hourly_rows(db: None) -> None:
    host = Host.objects.create(pi_id="h")
    model = Model.objects.create(key="p/m", provider="p", model_id="m")
    start = datetime(2026, 7, 13, 21, tzinfo=UTC)
    for hour in range(6):  # 21:00 on the 13th to 02:00 on the 14th
        for m in (model, None):
            Rollup.objects.create(
                bucket=start + timedelta(hours=hour),
                host=host,
                model=m,
                dimension="outcome",
                key="execution:failed",
                count=hour + 1,
            )
    with connection.cursor() as cursor:
        cursor.execute(backfill.BACKFILL)
    rows = {
        (r.bucket, r.model_id): r.count
        for r in DailyRollup.objects.filter(dimension="outcome", key="execution:failed")
    }
    assert rows == {
        (datetime(2026, 7, 13, tzinfo=UTC), model.pk): 1 + 2 + 3,
        (datetime(2026, 7, 13, tzinfo=UTC), None): 1 + 2 + 3,
        (datetime(2026, 7, 14, tzinfo=UTC), model.pk): 4 + 5 + 6,
        (datetime(2026, 7, 14, tzinfo=UTC), None): 4 + 5 + 6,
    }
