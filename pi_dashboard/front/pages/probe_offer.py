"""Whether to offer "Probe now…" for a host (issue 12 item 8).

A host-side probe runs pi's `tool_probe` through pi's RPC mode, which needs the
agent's `pi_command`. Agents say what they can do in their heartbeat
(`capabilities: {"probe", "rpc", "why"}`, CONTRACT.md), stored on `Agent.capabilities`.
The button is offered when an active agent of the host reports `probe: true`;
otherwise the page says why. A host with no active agent is offered it: the command
waits for its next agent, and nothing says that one cannot probe.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from pi_dashboard.fleet.models import Agent, Host, Model

NO_REPORT = (
    "The host's agent has not said whether it can probe (an older agent); "
    "probes need `pi_command` in its config."
)
CANNOT = "The host's agent cannot run pi's tool probe: no `pi_command` in its config."


@dataclass(frozen=True)
class ProbeOffer:
    is_offered: bool
    why_not: str = ""


def probe_offer(agents: Iterable[Agent]) -> ProbeOffer:
    active = [a for a in agents if a.is_active]
    reports = [a.capabilities for a in active]
    if not active:
        return ProbeOffer(is_offered=True)
    if any(isinstance(r, dict) and r.get("probe") is True for r in reports):
        return ProbeOffer(is_offered=True)
    said = [r for r in reports if isinstance(r, dict) and r]
    if not said:
        return ProbeOffer(is_offered=False, why_not=NO_REPORT)
    why = str(said[0].get("why") or "").strip()
    return ProbeOffer(is_offered=False, why_not=f"{CANNOT} ({why})" if why else CANNOT)


SUGGESTED_MODELS = 500


def probe_model_choices(*, host: Host, agents: Iterable[Agent]) -> list[str]:
    """Model keys to suggest for a host-side probe: those pi's models.json knows on
    the host, when its agent reports them (`capabilities.models`), then the models
    the dashboard knows. Only suggestions: pi also knows its built-in models."""
    reported: list[str] = []
    for agent in agents:
        models = agent.capabilities.get("models") if agent.is_active else None
        if isinstance(models, list):
            reported += [m for m in models if isinstance(m, str)]
    known = Model.objects.order_by("key").values_list("key", flat=True)
    seen = dict.fromkeys([*reported, *known[:SUGGESTED_MODELS]])
    return list(seen)[:SUGGESTED_MODELS]
