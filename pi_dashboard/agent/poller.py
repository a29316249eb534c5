"""The command loop: pull this host's commands, apply each, ack with the result."""

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from pi_dashboard.agent.backoff import Backoff
from pi_dashboard.agent.client import ApiClient
from pi_dashboard.agent.commands import Ack, AckOutbox, command_apply
from pi_dashboard.agent.config import AgentConfig
from pi_dashboard.agent.errors import ServerError, ServerUnreachable, Unauthorized
from pi_dashboard.agent.state import Contact

log = logging.getLogger(__name__)
# Ack answers that settle a command for good: 404 (not ours / gone), 409 (expired).
FINAL_ACK_STATUSES = (404, 409)


class CommandPoller:
    def __init__(
        self,
        *,
        cfg: AgentConfig,
        client: ApiClient,
        host_id: str,
        contact: Contact,
        poll_interval: Callable[[], float],
        command_gate: "threading.Lock | None" = None,
    ) -> None:
        self.cfg, self.client, self.host_id = cfg, client, host_id
        self.contact = contact
        self.poll_interval = poll_interval
        self.outbox = AckOutbox(cfg.data_dir)
        self.backoff = Backoff(base=1.0, cap=60.0)
        self.fatal: Unauthorized | None = None
        self._nudged = threading.Event()
        self.command_gate = command_gate or threading.Lock()

    def nudge(self) -> None:
        """The server answers again: stop backing off and poll now."""
        self._nudged.set()

    def _pause(self, stop: threading.Event, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while not stop.is_set() and not self._nudged.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._nudged.wait(min(remaining, 0.5))
        self._nudged.clear()  # one early retry per nudge, never a busy loop

    def poll_once(self, *, wait: int = 0) -> int:
        """Flush unsent acks, pull commands, apply and ack them; return how many."""
        for command_id in self.outbox.unsent():
            self._send_ack(command_id)
        timeout = wait + self.cfg.knob("http_timeout_seconds")
        data = self.client.get_json(f"/agent/commands?wait={wait}", timeout=timeout)
        self.contact.ok()
        commands = data.get("commands", []) if isinstance(data, dict) else []
        for cmd in commands:
            self.handle(cmd)
        return len(commands)

    def handle(self, cmd: dict[str, Any]) -> Ack:
        with self.command_gate:  # no snapshot is shipped between apply and ack
            return self._handle(cmd)

    def _handle(self, cmd: dict[str, Any]) -> Ack:
        command_id = str(cmd.get("id"))
        ack = self.outbox.get(command_id)
        if ack is None:  # never seen: apply (a redelivered one is only re-acked)
            ack = command_apply(self.cfg, self.host_id, cmd)
            log.info(
                "command %s %s %s: %s (%s)",
                command_id,
                cmd.get("kind"),
                cmd.get("model"),
                ack.status,
                ack.detail,
            )
            self.outbox.record(command_id, ack)
        self._send_ack(command_id)
        return ack

    def _send_ack(self, command_id: str) -> None:
        ack = self.outbox.get(command_id)
        if ack is None:
            return
        try:
            self.client.post_json(f"/agent/commands/{command_id}/ack", ack.as_json())
        except ServerError as exc:
            if exc.status not in FINAL_ACK_STATUSES:
                raise
            log.warning("ack of command %s not taken: %s", command_id, exc)
        self.outbox.mark_sent(command_id)

    def run(self, stop: threading.Event) -> None:
        """Loop until `stop`; a rejected token ends the loop and is kept in `fatal`."""
        wait = int(self.cfg.knob("long_poll_seconds"))
        while not stop.is_set():
            started = time.monotonic()
            try:
                self.poll_once(wait=wait)
                self.backoff.reset()
            except Unauthorized as exc:
                self.fatal = exc
                stop.set()
                return
            except (ServerUnreachable, ServerError) as exc:
                self.contact.failed(str(exc))
                retry_after = getattr(exc, "retry_after", None)
                self._pause(stop, self.backoff.next_delay(retry_after))
                continue
            except Exception:
                # A bug must not silently end command handling for good.
                log.exception("command poll failed")
                self._pause(stop, self.backoff.next_delay())
                continue
            elapsed = time.monotonic() - started
            stop.wait(max(0.0, self.poll_interval() - elapsed))
