"""What each action button does, in words: the confirmation dialog's text.

Kept beside the pages so the dialog says exactly what will happen, on which host,
before anyone clicks: the same sentences the tests read.
"""

import hashlib
from dataclasses import dataclass, field
from urllib.parse import urlencode

from django.urls import reverse

from pi_dashboard.fleet.models import Host, HostModel, Model


@dataclass(frozen=True)
class ActionSpec:
    dom_id: str
    label: str
    title: str
    what: list[str]
    url: str
    fields: dict[str, str] = field(default_factory=dict)
    confirm_label: str = "Confirm"
    danger: bool = True

    @property
    def confirm_url(self) -> str:
        """The plain confirmation page (GET): the dialog's text without JavaScript."""
        return f"{self.url}?{urlencode(self.fields)}"


def dom_id(*parts: str) -> str:
    """A stable, HTML-safe id (model keys hold slashes and dots)."""
    return "act-" + hashlib.sha1("|".join(parts).encode()).hexdigest()[:12]  # noqa: S324


def where(hm: HostModel, hostnames: list[str]) -> str:
    names = f" ({', '.join(hostnames)})" if hostnames else ""
    return f"{hm.model.key} on host {hm.host.pi_id}{names}"


def remove_rule_specs(
    hm: HostModel, mode: str, hostnames: list[str]
) -> list[ActionSpec]:
    fields = {"host": hm.host.pi_id, "model": hm.model.key, "mode": mode}
    url = reverse("fleet:action_remove_rule")
    on = where(hm, hostnames)
    applied = (
        "The agent on that host deletes the rule from model-adaptation.json under "
        "pi's own lock; no other rule, model or host is touched."
    )
    return [
        ActionSpec(
            dom_id=dom_id("remove", hm.host.pi_id, hm.model.key, mode),
            label="Remove",
            title=f"Remove the {mode} rule?",
            what=[
                f"Removes the standing rule {mode} for {on}.",
                applied,
                "Teach statistics are kept, so pi adds the rule again the next time "
                "this repair recurs.",
            ],
            url=url,
            fields={**fields, "also": ""},
            confirm_label="Remove rule",
        ),
        ActionSpec(
            dom_id=dom_id("forget", hm.host.pi_id, hm.model.key, mode),
            label="Remove and forget",
            title=f"Remove the {mode} rule and forget its statistics?",
            what=[
                f"Removes the standing rule {mode} for {on}, and clears the {mode} "
                "teach statistics (taught, before, after).",
                applied,
                "pi then needs three new repairs of this kind before it teaches the "
                "rule again.",
            ],
            url=url,
            fields={**fields, "also": "on"},
            confirm_label="Remove and forget",
        ),
    ]


def reset_protocol_specs(hm: HostModel, hostnames: list[str]) -> list[ActionSpec]:
    fields = {"host": hm.host.pi_id, "model": hm.model.key}
    url = reverse("fleet:action_reset_protocol")
    on = where(hm, hostnames)
    return [
        ActionSpec(
            dom_id=dom_id("reset", hm.host.pi_id, hm.model.key),
            label="Reset calibration",
            title="Reset the text-protocol calibration?",
            what=[
                f"Deletes the text-protocol calibration of {on}.",
                "pi does not recalibrate by itself: until the next probe this model "
                "gets no text-protocol fallback on that host.",
            ],
            url=url,
            fields={**fields, "also": ""},
            confirm_label="Reset calibration",
        ),
        ActionSpec(
            dom_id=dom_id("reset-probe", hm.host.pi_id, hm.model.key),
            label="Reset and re-probe",
            title="Reset the calibration and probe again?",
            what=[
                f"Deletes the text-protocol calibration of {on}, then runs pi's tool "
                "probe for this model on that host.",
                "The probe sends a few short requests to the model's provider and "
                "writes a new verdict (and a new calibration if a text dialect works).",
            ],
            url=url,
            fields={**fields, "also": "on"},
            confirm_label="Reset and probe",
        ),
    ]


def probe_spec(hm: HostModel, hostnames: list[str]) -> ActionSpec:
    return ActionSpec(
        dom_id=dom_id("probe", hm.host.pi_id, hm.model.key),
        label="Probe now",
        title="Probe this model on its host?",
        what=[
            f"Runs pi's tool probe for {where(hm, hostnames)}.",
            "The probe sends a few short requests to the model's provider from that "
            "host and replaces the stored verdict with the new one.",
        ],
        url=reverse("fleet:action_probe"),
        fields={"host": hm.host.pi_id, "model": hm.model.key},
        confirm_label="Probe now",
        danger=False,
    )


def probe_model_spec(host: Host, key: str, hostnames: list[str]) -> ActionSpec:
    names = f" ({', '.join(hostnames)})" if hostnames else ""
    return ActionSpec(
        dom_id=dom_id("probe-model", host.pi_id, key),
        label="Probe now",
        title=f"Probe {key} on this host?",
        what=[
            f"Runs pi's tool probe for {key} on host {host.pi_id}{names}, whether or "
            "not pi's store holds it yet: pi probes any model its models.json knows.",
            "The probe sends a few short requests to the model's provider from that "
            "host and stores pi's verdict; a model pi does not know fails, saying so.",
        ],
        url=reverse("fleet:action_probe_model"),
        fields={"host": host.pi_id, "model": key},
        confirm_label="Probe now",
        danger=False,
    )


def remove_everywhere_spec(model: Model, mode: str, host_ids: list[str]) -> ActionSpec:
    listed = ", ".join(host_ids)
    return ActionSpec(
        dom_id=dom_id("everywhere", model.key, mode),
        label="Remove on every host",
        title=f"Remove the {mode} rule on every host?",
        what=[
            f"Removes the standing rule {mode} for {model.key} on "
            f"{len(host_ids)} host{'s' if len(host_ids) != 1 else ''}: {listed}.",
            "One command per host; each host's agent applies its own. Teach "
            "statistics are kept.",
        ],
        url=reverse("fleet:action_remove_rule_everywhere"),
        fields={"model": model.key, "mode": mode},
        confirm_label=f"Remove on {len(host_ids)} host"
        + ("s" if len(host_ids) != 1 else ""),
    )
