"""Command lifecycle and control actions. (Being built for issues #3/#4.)"""

from datetime import datetime
from typing import Any

from pi_dashboard.fleet.models import Host, Model


def commands_confirm_from_snapshot(
    *, host: Host, model: Model, entry: dict[str, Any], taken_at: datetime
) -> int:
    """Mark applied commands whose effect `entry` (a newer snapshot) shows as confirmed.

    Called by snapshot ingest for every host × model it updates. Returns how many.
    """
    return 0
