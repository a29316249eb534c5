"""What an agent's heartbeat says about pi's store on its machine, in words.

The agent reads `model-adaptation.json` itself and reports whether pi can read it
and whose buckets it holds (heartbeat `store`). Two situations look like "0 models"
on the dashboard and need saying: a store keyed by other machines (copied, or this
machine's id changed after a RAM or vCPU change), and a store pi cannot read, which
pi treats as empty, so that its next write keeps only this host
(docs/pi-host-pitfalls.md §1.6).
"""

from dataclasses import dataclass
from typing import Any

SHOWN_IDS = 5


@dataclass(frozen=True)
class Finding:
    level: str  # "error" (urgent) | "warn" | "info", as the page's alert classes
    text: str


def store_findings(*, store: dict[str, Any], machine_host_id: str) -> list[Finding]:
    """What to tell the operator about the store, most urgent first."""
    status = store.get("status")
    reason = str(store.get("reason") or "").strip()
    if status == "unreadable":
        return [
            Finding(
                "error",
                "pi cannot read model-adaptation.json"
                + (f" ({reason})" if reason else "")
                + ": pi treats it as empty, and its next write will replace every "
                "other host's data in it with this host's alone. Restore or repair "
                "the file before pi writes again.",
            )
        ]
    if status == "missing":
        return [
            Finding(
                "info",
                "There is no model-adaptation.json on this machine yet"
                + (f" ({reason})" if reason else "")
                + "; pi writes one when it first learns something.",
            )
        ]
    ids = [str(i) for i in store.get("host_ids") or []]
    if status == "ok" and ids and machine_host_id not in ids:
        shown = ", ".join(ids[:SHOWN_IDS]) + (" …" if len(ids) > SHOWN_IDS else "")
        return [
            Finding(
                "warn",
                f"0 models because the store's buckets belong to {shown}, while this "
                f"machine's pi host id is {machine_host_id}: a store copied from "
                "another machine, or this machine's id changed (RAM or vCPU change). "
                "pi will start a new bucket for this id.",
            )
        ]
    return []
