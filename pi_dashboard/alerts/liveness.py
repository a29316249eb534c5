"""Up / late / down from the last heartbeat, with per-host and per-tag grace.

Nothing is stored: "down since" is the last contact plus the down grace, so the
state can never disagree with the heartbeats it is computed from.
"""

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from pi_dashboard.alerts.models import HostTag, LivenessGrace

UP, LATE, DOWN, NEVER = "up", "late", "down", "never"


@dataclass(frozen=True)
class Grace:
    late_seconds: int
    down_seconds: int


@dataclass(frozen=True)
class Liveness:
    status: str  # up | late | down | never (no contact yet)
    last_contact_at: datetime | None
    # When the host became late / down (last contact + grace); None while up.
    since: datetime | None

    @property
    def label(self) -> str:
        return {UP: "up", LATE: "late", DOWN: "down", NEVER: "never seen"}[self.status]


def default_grace() -> Grace:
    return Grace(settings.PI_LIVENESS_LATE_SECONDS, settings.PI_LIVENESS_DOWN_SECONDS)


class Policy:
    """Every override, read once (two small queries) for a page or an evaluation."""

    def __init__(self) -> None:
        self.by_host: dict[int, Grace] = {}
        self.by_tag: dict[str, Grace] = {}
        for host_id, tag, late, down in LivenessGrace.objects.values_list(
            "host_id", "tag", "late_seconds", "down_seconds"
        ):
            if host_id is not None:
                self.by_host[host_id] = Grace(late, down)
            else:
                self.by_tag[tag] = Grace(late, down)
        self.tags: dict[int, list[str]] = defaultdict(list)
        if self.by_tag:
            for host_id, tag in HostTag.objects.values_list("host_id", "tag"):
                self.tags[host_id].append(tag)
        self.default = default_grace()

    def grace(self, host_id: int | None) -> Grace:
        if host_id is None:
            return self.default
        if host_id in self.by_host:
            return self.by_host[host_id]
        # Several tags: the most patient grace wins (a slow link tags its hosts).
        tagged = [
            self.by_tag[t] for t in self.tags.get(host_id, []) if t in self.by_tag
        ]
        if tagged:
            return max(tagged, key=lambda g: g.down_seconds)
        return self.default

    def of(
        self, host_id: int | None, last_contact_at: datetime | None, now: datetime
    ) -> Liveness:
        return liveness_of(last_contact_at, self.grace(host_id), now)


def liveness_of(last: datetime | None, grace: Grace, now: datetime) -> Liveness:
    if last is None:
        return Liveness(NEVER, None, None)
    age = (now - last).total_seconds()
    if age >= grace.down_seconds:
        return Liveness(DOWN, last, last + timedelta(seconds=grace.down_seconds))
    if age >= grace.late_seconds:
        return Liveness(LATE, last, last + timedelta(seconds=grace.late_seconds))
    return Liveness(UP, last, None)


def host_liveness(host_id: int, last_contact_at: datetime | None) -> Liveness:
    """One host (a page with one host); lists build one Policy and reuse it."""
    return Policy().of(host_id, last_contact_at, timezone.now())
