"""The agent's own persisted state: shipped positions, counters, last contact.

Written atomically (temp + rename) after every delivered batch. Not fsynced: after a
crash the agent re-sends a little, and the server dedupes (at-least-once delivery).
"""

import json
import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pi_dashboard.agent import isotime

STATE_FILE = "state.json"
ACKS_FILE = "acks.json"


def read_json(path: Path, default: Any) -> Any:
    try:
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return default


def write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True))
    os.replace(tmp, path)


@dataclass
class Contact:
    """Shared by the shipping and command threads: when the server last answered."""

    last_contact_at: str | None = None
    last_shipped_at: str | None = None
    last_error: str | None = None
    last_error_at: str | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def ok(self, *, shipped: bool = False) -> None:
        with self._lock:
            self.last_contact_at = isotime.utc_now_iso()
            if shipped:
                self.last_shipped_at = self.last_contact_at

    def failed(self, message: str) -> None:
        with self._lock:
            self.last_error, self.last_error_at = message, isotime.utc_now_iso()

    def as_json(self) -> dict[str, Any]:
        with self._lock:
            return {
                "last_contact_at": self.last_contact_at,
                "last_shipped_at": self.last_shipped_at,
                "last_error": self.last_error,
                "last_error_at": self.last_error_at,
            }


class AgentState:
    """state.json: {tails, snapshot_hash, stats, counters, contact, host}."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / STATE_FILE
        raw = read_json(self.path, {})
        self.raw: dict[str, Any] = raw if isinstance(raw, dict) else {}
        self.contact = Contact(
            **{k: v for k, v in self.raw.get("contact", {}).items() if k[0] != "_"}
        )

    def get(self, key: str, default: Any) -> Any:
        return self.raw.get(key, default)

    def bump(self, counter: str, by: int = 1) -> None:
        counters = self.raw.setdefault("counters", {})
        counters[counter] = counters.get(counter, 0) + by

    def save(self, **values: Any) -> None:
        self.raw.update(values)
        self.raw["contact"] = self.contact.as_json()
        write_json_atomic(self.path, self.raw)
