"""pi's probe of one model, step for step (docs/pi-host-data.md §7.1–7.5).

Native read trial → echo trial → grade; unless the grade is `task`, the four-variant
text-protocol ladder (two tokens per variant). The outcome carries the exact objects pi
writes as `toolProbe` and, when calibrated, `protocol`. With k > 1 every trial must pass
k times in a row (k = 1 is exactly pi).

No Django here: the caller supplies the HTTP client and target, and a `progress`
callback run after every completion (the task uses it to extend its lease).
"""

import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import httpx

from pi_dashboard.lib import isotime
from pi_dashboard.probes import chat, textproto
from pi_dashboard.probes.parser import parse_text_tool_calls

ECHO_ONLY_DIAGNOSTIC = "Native echo probe passed but task-scale read probe failed."
ABSENT_DIAGNOSTIC = (
    "Native task-scale read and echo probes did not produce provider-native tool calls."
)
PROTOCOL_VERSION = 1


class ProbeSetupError(Exception):
    """The probe cannot send requests at all (pi: native grading threw)."""


def function_tool(tool: textproto.ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
            "strict": False,
        },
    }


def has_native_call(reply: chat.Reply, tool: str, arg: str, value: str) -> bool:
    for call in reply.tool_calls:
        if call.name != tool:
            continue
        try:
            args = json.loads(call.arguments or "{}")
        except ValueError:
            continue
        if isinstance(args, dict) and args.get(arg) == value:
            return True
    return False


def has_text_call(reply: chat.Reply, token: str) -> bool:
    text = reply.text_for_grading()
    if not text:
        return False
    parsed = parse_text_tool_calls(text, [textproto.ECHO_TOOL])
    # pi: `call.arguments.data === token`; arguments may be the raw body text.
    return any(
        c.name == "echo"
        and isinstance(c.arguments, dict)
        and c.arguments.get("data") == token
        for c in parsed.calls
    )


@dataclass
class ProbeOutcome:
    verdict: str
    native_grade: str
    variant: str = ""
    diagnostic: str = ""
    tool_probe: dict[str, Any] = field(default_factory=dict)
    protocol: dict[str, Any] | None = None
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    # Set when requests were sent and none was answered: a dead server is no verdict.
    failure: str = ""
    warning: str = ""


def no_answer_cause(exchanges: list[dict[str, Any]]) -> str:
    """Why a run whose requests all went unanswered failed; "" if any was answered."""
    if not exchanges or any(ex["response"].get("answered") for ex in exchanges):
        return ""
    errors = Counter(
        ex["response"].get("error") or f"HTTP {ex['response'].get('status')}"
        for ex in exchanges
    )
    listed = "; ".join(
        f"{error} (×{count})" if count > 1 else error
        for error, count in errors.most_common(3)
    )
    return (
        f"The server answered none of the {len(exchanges)} request(s), so this run "
        f"has no verdict: {listed}"
    )


@dataclass
class ProbeSession:
    client: httpx.Client
    target: chat.Target | None
    run_key: str
    trials: int = 1
    setup_error: str = ""
    progress: Callable[[], None] = lambda: None
    exchanges: list[dict[str, Any]] = field(default_factory=list)

    def send(self, kind: str, body: dict[str, Any]) -> chat.Reply:
        if self.target is None:
            raise ProbeSetupError(self.setup_error or "The endpoint is not usable.")
        try:
            reply = chat.complete(self.client, self.target, body)
        except chat.Unreachable as exc:
            # Kept: after a hang, the refused request is what explains the failure.
            self._record(kind, body, chat.Reply(error=str(exc), broke_off=True))
            raise
        self._record(kind, body, reply)
        self.progress()
        return reply

    def _record(self, kind: str, body: dict[str, Any], reply: chat.Reply) -> None:
        assert self.target is not None
        self.exchanges.append(
            {"kind": kind, **chat.transcript(self.target, body, reply), "passed": False}
        )

    def server_model_warning(self) -> str:
        """A warning when the server lists its models and ours is not among them."""
        if self.target is None:
            return ""
        listed = chat.list_models(self.client, self.target)
        if not listed or self.target.model in listed:
            return ""
        shown = ", ".join(listed[:10]) + (" …" if len(listed) > 10 else "")
        return (
            f"The server lists {len(listed)} model(s) at /models and server_model "
            f"{self.target.model!r} is not among them: {shown}"
        )

    def body(
        self, *, system: str, user: str, max_tokens: int, tools: list[Any]
    ) -> dict[str, Any]:
        if self.target is None:
            raise ProbeSetupError(self.setup_error or "The endpoint is not usable.")
        return chat.request_body(
            self.target, system=system, user=user, max_tokens=max_tokens, tools=tools
        )

    def trial(
        self, kind: str, body: dict[str, Any], check: Callable[[chat.Reply], bool]
    ) -> bool:
        """Send the trial `trials` times; it passes only if every one passes."""
        for _ in range(self.trials):
            reply = self.send(kind, body)
            passed = check(reply)
            self.exchanges[-1]["passed"] = passed
            if not passed:
                return False
        return True


def grade_native(session: ProbeSession) -> str:
    path = (
        f"/tmp/pi-dashboard/probes/native-tools/{session.run_key}/"  # noqa: S108 (never opened)
        f"pi-native-probe-{os.getpid()}-{int(time.time() * 1000)}.txt"
    )
    read = textproto.native_read_instruction(path)
    body = session.body(
        system=read,
        user=read,
        max_tokens=768,
        tools=[function_tool(textproto.READ_TOOL)],
    )
    if session.trial(
        "read-task", body, lambda r: has_native_call(r, "read", "path", path)
    ):
        return "task"
    echo = textproto.NATIVE_ECHO_INSTRUCTION
    body = session.body(
        system=echo,
        user=echo,
        max_tokens=256,
        tools=[function_tool(textproto.ECHO_TOOL)],
    )
    token = textproto.NATIVE_ECHO_TOKEN
    if session.trial("echo", body, lambda r: has_native_call(r, "echo", "data", token)):
        return "echo-only"
    return "absent"


def calibrate(session: ProbeSession) -> tuple[str, list[str]]:
    """The ladder: (chosen variant or "", variants tried)."""
    tried: list[str] = []
    for variant in textproto.VARIANTS:
        tried.append(variant)
        passed = True
        for token in textproto.TRIAL_TOKENS:
            body = session.body(
                system=textproto.calibration_system_prompt(variant, token),
                user=textproto.calibration_instruction(variant, token),
                max_tokens=256,
                tools=[],
            )
            check = lambda r, t=token: has_text_call(r, t)  # noqa: E731
            if not session.trial(f"text-protocol:{variant}", body, check):
                passed = False
                break
        if passed:
            return variant, tried
    return "", tried


def probe(session: ProbeSession) -> ProbeOutcome:
    """Run pi's probe; raises chat.Unreachable only (the task retries on it).

    Where pi records `none` for a server that answered nothing (timeouts, 404s), the
    outcome carries `failure` instead: a monitor must not call a dead server a verdict.
    """
    outcome = probe_as_pi(session)
    outcome.failure = no_answer_cause(outcome.exchanges)
    if outcome.failure or outcome.verdict == "none":
        outcome.warning = session.server_model_warning()
    return outcome


def probe_as_pi(session: ProbeSession) -> ProbeOutcome:
    """pi's probe, step for step, with pi's verdict whatever the server did."""
    probed_at = isotime.iso(datetime.now(UTC))
    grade = "absent"
    diagnostic = ""
    try:
        grade = grade_native(session)
        if grade == "task":
            return finish(session, "native", grade, probed_at)
        diagnostic = ECHO_ONLY_DIAGNOSTIC if grade == "echo-only" else ABSENT_DIAGNOSTIC
    except ProbeSetupError as exc:
        diagnostic = str(exc)
    try:
        variant, tried = calibrate(session)
        if variant:
            calibrated_at = isotime.iso(datetime.now(UTC))
            outcome = finish(
                session, "text-protocol", grade, calibrated_at, variant, diagnostic
            )
            outcome.protocol = {
                "version": PROTOCOL_VERSION,
                "status": "calibrated",
                "variant": variant,
                "calibratedAt": calibrated_at,
            }
            return outcome
        prefix = f"{diagnostic} " if diagnostic else ""
        diagnostic = f"{prefix}Text protocol variants failed: {', '.join(tried)}"
    except ProbeSetupError as exc:
        diagnostic = str(exc)
    return finish(session, "none", grade, probed_at, "", diagnostic)


def finish(
    session: ProbeSession,
    verdict: str,
    grade: str,
    probed_at: str,
    variant: str = "",
    diagnostic: str = "",
) -> ProbeOutcome:
    # Key order and omitted-when-absent fields as pi's JSON.stringify writes them.
    tool_probe: dict[str, Any] = {
        "version": PROTOCOL_VERSION,
        "status": verdict,
        "probedAt": probed_at,
    }
    if variant:
        tool_probe["variant"] = variant
    tool_probe["nativeGrade"] = grade
    if diagnostic:
        tool_probe["diagnostic"] = diagnostic
    return ProbeOutcome(
        verdict=verdict,
        native_grade=grade,
        variant=variant,
        diagnostic=diagnostic,
        tool_probe=tool_probe,
        exchanges=session.exchanges,
    )
