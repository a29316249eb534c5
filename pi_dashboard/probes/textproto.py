"""pi's text tool-call protocol: the four dialects, their envelopes and the primer.

The texts are pi's own (docs/pi-host-data.md §7.3–7.4) and must stay byte-identical: the
calibration verdict is only comparable with what pi records if the model saw the
same request. `tests/probes/test_textproto.py` compares them with the reference.
"""

import json
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape as xml_escape

TOOL_TAG = "tool-tag"
TOOL_CALL = "tool-call"
FENCED_JSON = "fenced-json"
FUNCTION_XML = "function-xml"
# Ladder order (TEXT_TOOL_PROTOCOL_VARIANTS).
VARIANTS: tuple[str, ...] = (TOOL_TAG, TOOL_CALL, FENCED_JSON, FUNCTION_XML)
TRIAL_TOKENS: tuple[str, ...] = ("pi-calibration-1", "pi-calibration-2")


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any] = field(default_factory=dict)


ECHO_TOOL = ToolSpec(
    name="echo",
    description="Echo calibration data",
    parameters={
        "type": "object",
        "properties": {"data": {"type": "string"}},
        "required": ["data"],
    },
)
READ_TOOL = ToolSpec(
    name="read",
    description="Read file contents",
    parameters={
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
)

PRIMER_RULES = (
    "Arguments: one JSON object; quote keys/strings; arrays [ ] never quoted; "
    "omit optional args, never null.\n"
    "Reasoning before envelope only.\n"
    "Parallel: multiple envelopes/reply; each runs, returns independently.\n"
    "Success: use result; do not repeat unchanged successful calls.\n"
    "File-read request: first reply one read call only, never guess. "
    "All file/directory/search/edit/write/shell work uses envelopes; "
    "never substitute prose commands/paths/invented results."
)


def js_json(value: Any) -> str:
    """JSON as JavaScript's JSON.stringify writes it (compact, non-ASCII kept)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def envelope(variant: str, tool: str, arguments: dict[str, Any]) -> str:
    """The exact envelope a compliant model answers with in `variant`."""
    if variant == TOOL_TAG:
        return f'<pi:call name="{tool}">{js_json(arguments)}</pi:call>'
    call = f'{{"name":{js_json(tool)},"arguments":{js_json(arguments)}}}'
    if variant == TOOL_CALL:
        return f"<tool_call>{call}</tool_call>"
    if variant == FENCED_JSON:
        return f"```tool_call\n{call}\n```"
    if variant == FUNCTION_XML:
        params = "".join(
            f'<param name="{xml_escape(key, {chr(34): "&quot;"})}">'
            f"{xml_escape(val if isinstance(val, str) else js_json(val))}</param>"
            for key, val in arguments.items()
        )
        name = xml_escape(tool, {chr(34): "&quot;"})
        return f'<function name="{name}">{params}</function>'
    raise ValueError(f"unknown text-protocol variant {variant!r}")


def tool_signature(tool: ToolSpec) -> str:
    props: dict[str, Any] = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    args = ", ".join(
        f"{name}{'' if name in required else '?'}:{spec.get('type', 'any')}"
        for name, spec in props.items()
    )
    return f"{tool.name}({args}) - {tool.description}"


def primer(variant: str, tools: list[ToolSpec]) -> str:
    """The system-prompt primer pi generates for `variant` and `tools`."""
    example_tool = tools[0]
    example_args = {name: "value" for name in example_tool.parameters["properties"]}
    lines = [
        "Text tool-call protocol is enabled. Call tools only with this exact envelope:",
        envelope(variant, "TOOL", {"arg": "value"}),
        PRIMER_RULES,
        "Examples:",
        envelope(variant, example_tool.name, example_args),
        "Available tools:",
        *(tool_signature(tool) for tool in tools),
    ]
    return "\n".join(lines)


def calibration_instruction(variant: str, token: str) -> str:
    return (
        f'Text tool protocol calibration trial. Call echo, data exactly "{token}". '
        "Output only:\n" + envelope(variant, "echo", {"data": token})
    )


def calibration_system_prompt(variant: str, token: str) -> str:
    return (
        primer(variant, [ECHO_TOOL]) + "\n\n" + calibration_instruction(variant, token)
    )


def native_read_instruction(path: str) -> str:
    return (
        "Native tool-call capability probe: task-scale read. "
        f'Provider-native call only: read once, path exactly "{path}".'
    )


NATIVE_ECHO_TOKEN = "pi-native-probe"  # noqa: S105 (probe data, not a secret)
NATIVE_ECHO_INSTRUCTION = (
    "Native tool-call capability probe: echo-only. "
    f'Provider-native call only: echo, data exactly "{NATIVE_ECHO_TOKEN}".'
)
