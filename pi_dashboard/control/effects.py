"""What a command changes in pi's stored entry, read from the entry itself.

Pure functions over one `hosts[<host>][<model>]` entry of `model-adaptation.json`
(docs/pi-host-data.md §1.4, §1.5), read through `fleet/entry.py`. They decide both
whether a command makes sense (is the rule there to remove?) and whether a newer
snapshot shows that it took effect.
"""

from typing import Any

from django.utils.dateparse import parse_datetime

from pi_dashboard.control.models import Command, CommandKind
from pi_dashboard.fleet import entry as entry_format

# The entry's readers, re-exported: control.services checks a command against them.
rule_modes = entry_format.rule_modes
teach_modes = entry_format.teach_modes
probed_at = entry_format.probed_at


def has_protocol(entry: dict[str, Any]) -> bool:
    """A calibrated or (legacy) failed text-protocol record is present."""
    return entry_format.protocol(entry) is not None


def effect_shown(command: Command, entry: dict[str, Any]) -> bool:
    """Whether `entry` shows what `command` was meant to do."""
    mode = command.params.get("mode")
    if command.kind == CommandKind.REMOVE_RULE:
        return mode not in rule_modes(entry)
    if command.kind == CommandKind.FORGET_MODE:
        return mode not in teach_modes(entry)
    if command.kind == CommandKind.RESET_PROTOCOL:
        return not has_protocol(entry)
    if command.kind == CommandKind.PROBE:
        # Compared with the verdict on record when the command was created, not with
        # the server clock: probedAt comes from the host's clock, which may be skewed.
        at = probed_at(entry)
        before = command.baseline.get("probed_at")
        before_at = parse_datetime(before) if isinstance(before, str) else None
        return at is not None and (before_at is None or at > before_at)
    return False


def baseline(kind: str, entry: dict[str, Any]) -> dict[str, Any]:
    """What a command's confirmation is later compared with (see effect_shown)."""
    if kind == CommandKind.PROBE:
        at = probed_at(entry)
        return {"probed_at": at.isoformat() if at is not None else None}
    return {}
