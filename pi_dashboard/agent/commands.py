"""Carry out the server's commands on this host's pi state, and ack each one.

Kinds (protocol.md): remove_rule, reset_protocol, forget_mode, probe. With
`pi_command` configured, remove/reset/probe go through pi's RPC mode; otherwise
remove/reset/forget edit the store file under pi's lock, and probe fails (only pi
can probe). A busy pi (its lock held) is waited for within the command's lifetime,
in both modes. Every result is written to an on-disk outbox before it is acked, so a
command redelivered after a crash or a lost ack is acked again, never re-applied.
"""

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_dashboard.agent import backoff, isotime, rpc, store_edit
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
    left = (expires - datetime.now(UTC)).total_seconds() if expires else None
    try:
        result = _dispatch(_Run(cfg, left), host_id, cmd)
    except AgentError as exc:
        return Ack("failed", {}, str(exc))
    except OSError as exc:
        return Ack("failed", {}, f"cannot edit pi's store: {exc}")
    return Ack("applied", result, _describe(cmd, result))


def _describe(cmd: dict[str, Any], result: dict[str, Any]) -> str:
    if "removed" in result:
        text = "removed" if result["removed"] else "nothing to remove (already gone)"
    elif "cleared" in result:
        text = "cleared" if result["cleared"] else "no teach statistics to clear"
    else:
        return f"probe verdict {result.get('verdict')}"
    if result.get("write_survived") is False:
        text += (
            "; but after taking over pi's stale lock, pi wrote its own copy back:"
            " the file does not hold this change"
        )
    return text


@dataclass(frozen=True)
class _Run:
    """A command being carried out: the config and the seconds it has left."""

    cfg: AgentConfig
    left: float | None  # None: the command does not expire

    def lock_wait(self) -> float:
        """Wait for a busy pi as long as the command lives (else the config's wait)."""
        if self.left is None:
            return self.cfg.knob("lock_wait_seconds")
        return max(0.0, self.left)


def _dispatch(run: _Run, host_id: str, cmd: dict[str, Any]) -> dict[str, Any]:
    kind, model = cmd.get("kind"), cmd.get("model")
    params = cmd.get("params") or {}
    if not isinstance(model, str) or "/" not in model:
        raise CommandFailed(f"command has no valid model key: {model!r}")
    mode = params.get("mode") if isinstance(params, dict) else None
    if kind in ("remove_rule", "forget_mode") and not (isinstance(mode, str) and mode):
        raise CommandFailed(f"{kind} needs params.mode")
    cfg = run.cfg
    if kind == "remove_rule":
        if cfg.pi_command:
            return _rpc_removed(run, "remove_tool_repair_rule", model, mode=mode)
        return _file_edit(run, host_id, model, store_edit.remove_rule(str(mode)))
    if kind == "reset_protocol":
        if cfg.pi_command:
            return _rpc_removed(run, "reset_tool_protocol", model)
        return _file_edit(run, host_id, model, store_edit.reset_protocol())
    if kind == "forget_mode":
        # pi has no RPC for teach statistics (reference §6.2): always the file.
        edit = store_edit.forget_mode(str(mode))
        return _file_edit(run, host_id, model, edit, answer="cleared")
    if kind == "probe":
        return _probe(run, model)
    raise CommandFailed(f"unknown command kind {kind!r}")


def _file_edit(
    run: _Run,
    host_id: str,
    model: str,
    edit: store_edit.Edit,
    *,
    answer: str = "removed",
) -> dict[str, Any]:
    outcome = store_edit.store_edit_apply(
        path=run.cfg.state_dir / STORE_FILE,
        host_id=host_id,
        model=model,
        edit=edit,
        stale=run.cfg.knob("lock_stale_seconds"),
        wait=run.lock_wait(),
        recheck=run.cfg.knob("takeover_recheck_seconds"),
    )
    result: dict[str, Any] = {answer: outcome.applied, "via": "file"}
    if outcome.took_over:
        result.update(took_over_stale_lock=True, write_survived=outcome.survived)
    return result


def _rpc(run: _Run, command: dict[str, Any]) -> Any:
    """One RPC command; while pi answers that its lock is held, retry with backoff
    for as long as the command lives."""
    cfg = run.cfg
    assert cfg.pi_command
    started = time.monotonic()
    deadline = started + run.lock_wait()
    delays = backoff.Backoff(base=0.5, cap=5.0)
    attempts = 0
    while True:
        attempts += 1
        try:
            return rpc.rpc_call(
                pi_command=cfg.pi_command,
                agent_dir=cfg.agent_dir,
                command=command,
                timeout=cfg.knob("rpc_timeout_seconds"),
            )
        except rpc.RpcError as exc:
            if not exc.lock_busy:
                raise
            delay = delays.next_delay()
            if time.monotonic() + delay >= deadline:
                waited = time.monotonic() - started
                raise CommandFailed(
                    f"{exc}: pi stayed busy for {waited:.0f}s "
                    f"({attempts} attempt{'s' if attempts > 1 else ''}, "
                    "until the command's lifetime ran out)"
                ) from None
            log.info(
                "pi's store is locked; retrying %s in %.1fs", command["type"], delay
            )
            time.sleep(delay)


def _rpc_removed(run: _Run, rpc_type: str, model: str, **extra: Any) -> dict[str, Any]:
    data = _rpc(run, {"type": rpc_type, "model": model, **extra})
    if not isinstance(data, dict) or not isinstance(data.get("removed"), bool):
        raise CommandFailed(f"pi {rpc_type} answered without `removed`: {data!r}")
    return {"removed": data["removed"], "via": "rpc"}


def _probe(run: _Run, model: str) -> dict[str, Any]:
    if not run.cfg.pi_command:
        raise CommandFailed(
            "probe needs pi's RPC mode: set `pi_command` in the agent config "
            "(e.g. enroll with --pi-command pi)"
        )
    data = _rpc(run, {"type": "tool_probe", "model": model})
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
