"""Carry out the server's commands on this host's pi state, and ack each one.

Kinds (protocol.md): remove_rule, reset_protocol, forget_mode, probe. With
`pi_command` configured, remove/reset/probe go through pi's RPC mode; otherwise
remove/reset/forget edit the store file under pi's lock, and probe fails (only pi
can probe). Every result is written to an on-disk outbox before it is acked, so a
command redelivered after a crash or a lost ack is acked again, never re-applied.
"""

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_dashboard.agent import isotime, rpc, store_edit
from pi_dashboard.agent.config import AgentConfig
from pi_dashboard.agent.errors import AgentError
from pi_dashboard.agent.sources import STORE_FILE
from pi_dashboard.agent.state import ACKS_FILE, read_json, write_json_atomic

log = logging.getLogger(__name__)
OUTBOX_KEEP = 500


@dataclass(frozen=True)
class Ack:
    status: str  # "applied" | "failed"
    result: dict[str, Any]
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "result": self.result, "detail": self.detail}


class CommandFailed(AgentError):
    pass


def command_apply(cfg: AgentConfig, host_id: str, cmd: dict[str, Any]) -> Ack:
    """Apply one command; never raises for a command that cannot be carried out."""
    expires = isotime.parse_iso(cmd.get("expires_at"))
    if expires is not None and expires <= datetime.now(UTC):
        return Ack("failed", {}, f"expired at {cmd['expires_at']}; not applied")
    try:
        result = _dispatch(cfg, host_id, cmd)
    except AgentError as exc:
        return Ack("failed", {}, str(exc))
    except OSError as exc:
        return Ack("failed", {}, f"cannot edit pi's store: {exc}")
    return Ack("applied", result, _describe(cmd, result))


def _describe(cmd: dict[str, Any], result: dict[str, Any]) -> str:
    if "removed" in result:
        return "removed" if result["removed"] else "nothing to remove (already gone)"
    if "cleared" in result:
        return "cleared" if result["cleared"] else "no teach statistics to clear"
    return f"probe verdict {result.get('verdict')}"


def _dispatch(cfg: AgentConfig, host_id: str, cmd: dict[str, Any]) -> dict[str, Any]:
    kind, model = cmd.get("kind"), cmd.get("model")
    params = cmd.get("params") or {}
    if not isinstance(model, str) or "/" not in model:
        raise CommandFailed(f"command has no valid model key: {model!r}")
    mode = params.get("mode") if isinstance(params, dict) else None
    if kind in ("remove_rule", "forget_mode") and not (isinstance(mode, str) and mode):
        raise CommandFailed(f"{kind} needs params.mode")
    if kind == "remove_rule":
        if cfg.pi_command:
            return _rpc_removed(cfg, "remove_tool_repair_rule", model, mode=mode)
        return _file_edit(cfg, host_id, model, store_edit.remove_rule(str(mode)))
    if kind == "reset_protocol":
        if cfg.pi_command:
            return _rpc_removed(cfg, "reset_tool_protocol", model)
        return _file_edit(cfg, host_id, model, store_edit.reset_protocol())
    if kind == "forget_mode":
        # pi has no RPC for teach statistics (reference §6.2): always the file.
        changed = _edit(cfg, host_id, model, store_edit.forget_mode(str(mode)))
        return {"cleared": changed, "via": "file"}
    if kind == "probe":
        return _probe(cfg, model)
    raise CommandFailed(f"unknown command kind {kind!r}")


def _edit(cfg: AgentConfig, host_id: str, model: str, edit: store_edit.Edit) -> bool:
    return store_edit.store_edit_entry(
        path=cfg.state_dir / STORE_FILE,
        host_id=host_id,
        model=model,
        edit=edit,
        stale=cfg.knob("lock_stale_seconds"),
        wait=cfg.knob("lock_wait_seconds"),
    )


def _file_edit(
    cfg: AgentConfig, host_id: str, model: str, edit: store_edit.Edit
) -> dict[str, Any]:
    return {"removed": _edit(cfg, host_id, model, edit), "via": "file"}


def _rpc(cfg: AgentConfig, command: dict[str, Any]) -> Any:
    assert cfg.pi_command
    return rpc.rpc_call(
        pi_command=cfg.pi_command,
        agent_dir=cfg.agent_dir,
        command=command,
        timeout=cfg.knob("rpc_timeout_seconds"),
    )


def _rpc_removed(
    cfg: AgentConfig, rpc_type: str, model: str, **extra: Any
) -> dict[str, Any]:
    data = _rpc(cfg, {"type": rpc_type, "model": model, **extra})
    if not isinstance(data, dict) or not isinstance(data.get("removed"), bool):
        raise CommandFailed(f"pi {rpc_type} answered without `removed`: {data!r}")
    return {"removed": data["removed"], "via": "rpc"}


def _probe(cfg: AgentConfig, model: str) -> dict[str, Any]:
    if not cfg.pi_command:
        raise CommandFailed(
            "probe needs pi's RPC mode: set `pi_command` in the agent config "
            "(e.g. enroll with --pi-command pi)"
        )
    data = _rpc(cfg, {"type": "tool_probe", "model": model})
    results = data.get("results") if isinstance(data, dict) else None
    for result in results or []:
        if isinstance(result, dict) and result.get("model") == model:
            return {**result, "via": "rpc"}
    raise CommandFailed(f"pi tool_probe returned no result for {model}")


class AckOutbox:
    """acks.json: {command id: {ack, sent}}; the most recent OUTBOX_KEEP are kept."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / ACKS_FILE
        raw = read_json(self.path, {})
        self.entries: dict[str, dict[str, Any]] = raw if isinstance(raw, dict) else {}

    def get(self, command_id: str) -> Ack | None:
        entry = self.entries.get(command_id)
        if entry is None:
            return None
        return Ack(entry["status"], entry.get("result", {}), entry.get("detail", ""))

    def record(self, command_id: str, ack: Ack) -> None:
        self.entries[command_id] = {**ack.as_json(), "sent": False}
        while len(self.entries) > OUTBOX_KEEP:
            del self.entries[next(iter(self.entries))]
        self._save()

    def mark_sent(self, command_id: str) -> None:
        if command_id in self.entries:
            self.entries[command_id]["sent"] = True
            self._save()

    def unsent(self) -> list[str]:
        return [cid for cid, e in self.entries.items() if not e.get("sent")]

    def _save(self) -> None:
        write_json_atomic(self.path, self.entries)
