"""Where a snapshot stands in its agent's send order: current, or stale.

The agent numbers its snapshots (`X-Snapshot-Seq`) within an epoch
(`X-Snapshot-Epoch`, random, created with its counter). A reinstalled agent, its
state file gone, counts from 1 again in a new epoch: that is a new order, taken as
the truth, not a run of stale snapshots. A late snapshot of an epoch the agent has
left is stale. Without a number, arrival order decides; without an epoch (older
agents), the number alone.
"""

from dataclasses import dataclass, field
from typing import Any

# Epochs an agent has left, remembered so their late snapshots stay stale.
PAST_EPOCHS_KEPT = 20


@dataclass(frozen=True)
class StoredOrder:
    """The agent's order so far (fleet.Agent.snapshot_seq/_epoch/_epochs_past)."""

    seq: int | None
    epoch: str = ""
    past: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Placed:
    stale: bool
    restarted: bool = False  # a new epoch replaced an order already under way
    updates: dict[str, Any] = field(default_factory=dict)  # Agent fields to save


def snapshot_place(
    stored: StoredOrder, *, seq: int | None, epoch: str | None
) -> Placed:
    """Judge a snapshot numbered `seq` in `epoch` against the stored order."""
    if seq is None:
        return Placed(stale=False)
    if epoch is None or epoch == stored.epoch:
        if stored.seq is not None and seq < stored.seq:
            return Placed(stale=True)
        ahead = stored.seq is None or seq > stored.seq
        return Placed(stale=False, updates={"snapshot_seq": seq} if ahead else {})
    if epoch in stored.past:
        return Placed(stale=True)
    # A new epoch. An agent upgraded to send epochs keeps counting up (no restart);
    # a lower number, or a change from another epoch, is the order restarting.
    restarted = stored.seq is not None and (bool(stored.epoch) or seq < stored.seq)
    past = [*stored.past, stored.epoch] if stored.epoch else list(stored.past)
    return Placed(
        stale=False,
        restarted=restarted,
        updates={
            "snapshot_seq": seq,
            "snapshot_epoch": epoch,
            "snapshot_epochs_past": past[-PAST_EPOCHS_KEPT:],
        },
    )
