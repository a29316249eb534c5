"""Where a host's own verdict for a model and a server-side probe of it differ.

Both are pi's probe, so they should agree; when they do not, the pages say so next
to each other and explain what can make them differ (issue 13 item 10). A read of
rows the page has already loaded: no query of its own.
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Protocol

from pi_dashboard.probes.models import Endpoint

# Worse to better, to say which side found more.
VERDICT_RANK = {"none": 0, "text-protocol": 1, "native": 2}
FAR_APART = timedelta(days=1)


class HostVerdict(Protocol):
    """What a host's current state says of its probe (fleet.HostModel)."""

    probe_status: str
    probe_grade: str
    probe_variant: str
    probed_at: datetime | None


@dataclass(frozen=True)
class Verdict:
    verdict: str
    grade: str
    variant: str

    @property
    def label(self) -> str:
        parts = [self.verdict, self.grade, self.variant]
        return " / ".join(p for p in parts if p)


@dataclass
class Disagreement:
    host_model: HostVerdict
    endpoint: Endpoint
    host: Verdict
    server: Verdict
    differs: list[str]
    reasons: list[str] = field(default_factory=list)


def verdict_disagreements(
    *, endpoints: Iterable[Endpoint], host_models: Iterable[HostVerdict]
) -> list[Disagreement]:
    """Every probed host × probed endpoint of one model whose verdicts differ."""
    found = []
    probed = [e for e in endpoints if e.last_verdict]
    for hm in host_models:
        if not hm.probe_status:
            continue
        host = Verdict(hm.probe_status, hm.probe_grade, _variant(hm))
        for endpoint in probed:
            server = Verdict(
                endpoint.last_verdict, endpoint.last_grade, endpoint.last_variant
            )
            differs = _differs(host, server)
            if differs:
                d = Disagreement(hm, endpoint, host, server, differs)
                d.reasons = _reasons(d)
                found.append(d)
    return found


def _variant(hm: HostVerdict) -> str:
    return hm.probe_variant if hm.probe_status == "text-protocol" else ""


def _differs(host: Verdict, server: Verdict) -> list[str]:
    differs = []
    if host.verdict != server.verdict:
        differs.append("verdict")
    if host.grade != server.grade:
        differs.append("native grade")
    if host.verdict == server.verdict == "text-protocol" and (
        host.variant != server.variant
    ):
        differs.append("text-protocol variant")
    return differs


def _reasons(d: Disagreement) -> list[str]:
    endpoint, host_at = d.endpoint, d.host_model.probed_at
    server_at = endpoint.last_probed_at
    reasons = []
    if host_at and server_at and abs(server_at - host_at) > FAR_APART:
        newer = "server-side probe" if server_at > host_at else "host's probe"
        reasons.append(
            f"They were probed {_span(abs(server_at - host_at))} apart; the "
            f"{newer} is newer. The provider may have changed the model or how it "
            "serves it in between."
        )
    reasons.append(
        "pi on the host reaches the model through its own provider settings "
        f"(models.json); this endpoint calls {endpoint.base_url} as "
        f"{endpoint.server_model!r}. A different server, quantisation, chat template "
        "or tool-call parser gives different tool calls."
    )
    if endpoint.trials > 1 and _rank(d.server) < _rank(d.host):
        reasons.append(
            f"This endpoint needs each trial to pass {endpoint.trials} times in a "
            "row; pi passes a trial on one answer."
        )
    if d.differs == ["text-protocol variant"]:
        reasons.append(
            "Both fall back to the text protocol in different dialects: the first "
            "dialect whose two trials pass wins, so a model that is unsteady "
            "across dialects can land on either."
        )
    reasons.append("Probe both again to see whether the difference holds.")
    return reasons


def _rank(v: Verdict) -> int:
    return VERDICT_RANK.get(v.verdict, 0)


def _span(delta: timedelta) -> str:
    days = round(delta / timedelta(days=1))
    if days >= 2:
        return f"{days} days"
    return f"{round(delta / timedelta(hours=1))} hours"
