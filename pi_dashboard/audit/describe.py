"""Audit entries in words, for the audit page and a command's trail."""

import json
from typing import Any


def audit_summary(*, action: str, detail: Any) -> str:
    """One line: why it was refused, else what was done."""
    d: dict[str, Any] = detail if isinstance(detail, dict) else {}
    if d.get("reason"):
        return str(d["reason"])
    if d.get("needed_role"):
        where = f"{d.get('method', '')} {d.get('path', '')}".strip()
        return f"{where} needs the {d['needed_role']} role"
    if action.startswith("token.") and d.get("prefix"):
        return f"token “{d.get('name', '')}” ({d['prefix']}…) of {d.get('owner', '')}"
    parts = [_command_words(d)]
    if d.get("duplicate_of"):
        parts.append("already queued: the open command was reused")
    if action == "command.ack":
        parts.append(_ack_words(d))
    if action == "command.confirmed":
        parts.append("shown by the next snapshot")
    return " — ".join(p for p in parts if p)


def _command_words(d: dict[str, Any]) -> str:
    if not d.get("kind"):
        return ""
    params = d.get("params") if isinstance(d.get("params"), dict) else {}
    mode = params.get("mode") if params else None
    return str(d["kind"]).replace("_", " ") + (f" {mode}" if mode else "")


def _ack_words(d: dict[str, Any]) -> str:
    result = d.get("result") if isinstance(d.get("result"), dict) else {}
    shown = ", ".join(
        f"{k} {v if isinstance(v, str) else json.dumps(v)}"
        for k, v in (result or {}).items()
        if k != "via"
    )
    return " · ".join(str(x) for x in (d.get("status"), shown, d.get("detail")) if x)
