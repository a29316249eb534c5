"""“Probe now…” only where the host's agent can probe (issue 12 item 8).

Agents report `capabilities` in their heartbeat (CONTRACT.md); the stored report is
`Agent.capabilities`. These build agents in memory with that report attached, so they
hold whether or not this checkout's Agent model has the field yet.
"""

from typing import Any

from django.utils import timezone

from pi_dashboard.fleet.models import Agent
from pi_dashboard.front.pages.probe_offer import CANNOT, NO_REPORT, probe_offer


def agent(capabilities: Any = None, *, revoked: bool = False) -> Agent:
    made = Agent(name="a", token_prefix="p", token_hash="h")
    if revoked:
        made.revoked_at = timezone.now()
    if capabilities is not None:
        made.capabilities = capabilities  # type: ignore[attr-defined]
    return made


def test_offered_when_an_agent_reports_it_can_probe() -> None:
    offer = probe_offer([agent({"probe": False}), agent({"probe": True, "rpc": True})])
    assert offer.is_offered


def test_not_offered_with_the_agents_reason() -> None:
    offer = probe_offer([agent({"probe": False, "why": "no pi_command in the config"})])
    assert not offer.is_offered
    assert offer.why_not == f"{CANNOT} (no pi_command in the config)"


def test_an_agent_that_reported_nothing_is_not_offered() -> None:
    offer = probe_offer([agent({})])
    assert not offer.is_offered
    assert offer.why_not == NO_REPORT


def test_revoked_agents_do_not_count() -> None:
    offer = probe_offer([agent({"probe": True}, revoked=True), agent({"probe": False})])
    assert not offer.is_offered


def test_an_agent_that_never_sent_a_report_is_not_offered() -> None:
    # Agent.capabilities exists now (default {}): no report is not "can probe".
    assert probe_offer([agent()]).why_not == NO_REPORT


def test_a_host_without_an_active_agent_is_offered() -> None:
    # The command waits for the host's next agent; nothing says it cannot probe.
    assert probe_offer([]).is_offered
