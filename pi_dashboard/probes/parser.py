"""Parser for text-protocol tool calls, accepting every dialect (reference §7.3).

Like pi's, it does not care which variant is being calibrated: `<pi:call>`,
`<tool_call>`, fenced `tool_call`/`tool`/`json` blocks and `<function>` are all read,
and single-quoted or bare-key JSON is tolerated. Overlapping envelopes keep the largest
non-overlapping set.
"""

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

from pi_dashboard.probes.textproto import ToolSpec

PI_CALL = re.compile(
    r"<pi:call\s+name\s*=\s*([\"'])(?P<name>.*?)\1\s*>(?P<body>.*?)</pi:call\s*>", re.S
)
TOOL_CALL_TAG = re.compile(r"<tool_call\s*>(?P<body>.*?)</tool_call\s*>", re.S)
FENCE = re.compile(r"```[ \t]*(?:tool_call|tool|json)[ \t]*\r?\n(?P<body>.*?)```", re.S)
FUNCTION = re.compile(
    r"<function\s+name\s*=\s*([\"'])(?P<name>.*?)\1\s*>(?P<body>.*?)</function\s*>",
    re.S,
)
PARAM = re.compile(
    r"<param\s+name\s*=\s*([\"'])(?P<name>.*?)\1\s*>(?P<value>.*?)</param\s*>", re.S
)
IDENT = re.compile(r"[A-Za-z_$][\w$-]*")

TYPE_CHECKS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "number": (int, float),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


@dataclass(frozen=True)
class TextCall:
    name: str
    arguments: dict[str, Any]


@dataclass
class ParseResult:
    calls: list[TextCall] = field(default_factory=list)
    # pi's reasons: overlap, unrecognized, unknown-tool, validation-failed.
    failures: list[str] = field(default_factory=list)

    @property
    def attempted(self) -> bool:
        return bool(self.calls or self.failures)

    @property
    def failure(self) -> str | None:
        return self.failures[0] if self.failures else None


@dataclass(frozen=True)
class Envelope:
    start: int
    end: int
    kind: str
    name: str | None
    body: str


def _read_quoted(text: str, i: int, quote: str) -> tuple[str, int]:
    """Read a quoted string starting after the opening quote; return (value, next i)."""
    out: list[str] = []
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == quote or nxt == "\\":
                out.append(nxt)
            else:
                # Leave JSON escapes (\n, \u…) for json.loads to decode.
                out.append(json.loads(f'"\\{nxt}"') if nxt in 'bfnrt/"' else "\\" + nxt)
            i += 2
            continue
        if ch == quote:
            return "".join(out), i + 1
        out.append(ch)
        i += 1
    raise ValueError("unterminated string")


def loose_json(text: str) -> Any:
    """json.loads, but also single-quoted strings, bare keys and trailing commas."""
    try:
        return json.loads(text)
    except ValueError:
        pass
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "\"'":
            value, i = _read_quoted(text, i + 1, ch)
            out.append(json.dumps(value))
            continue
        ident = IDENT.match(text, i)
        if ident:
            word = ident.group(0)
            rest = text[ident.end() :].lstrip()
            if word in {"true", "false", "null"}:
                out.append(word)
            elif rest.startswith(":"):
                out.append(json.dumps(word))
            else:
                raise ValueError(f"bare word {word!r}")
            i = ident.end()
            continue
        if ch == "," and text[i + 1 :].lstrip()[:1] in {"}", "]"}:
            i += 1
            continue
        out.append(ch)
        i += 1
    return json.loads("".join(out))


def find_envelopes(text: str) -> tuple[list[Envelope], int]:
    """All envelopes in text; overlapping ones resolved. Returns (kept, dropped)."""
    found: list[Envelope] = []
    for kind, pattern in (
        ("pi-call", PI_CALL),
        ("tool_call", TOOL_CALL_TAG),
        ("fence", FENCE),
        ("function", FUNCTION),
    ):
        for m in pattern.finditer(text):
            name = m.groupdict().get("name")
            found.append(Envelope(m.start(), m.end(), kind, name, m.group("body")))
    # Earliest end first gives the largest non-overlapping set.
    kept: list[Envelope] = []
    for env in sorted(found, key=lambda e: (e.end, e.start)):
        if not kept or env.start >= kept[-1].end:
            kept.append(env)
    kept.sort(key=lambda e: e.start)
    return kept, len(found) - len(kept)


def _decode(env: Envelope, tools: dict[str, ToolSpec]) -> tuple[str, Any]:
    if env.kind == "pi-call":
        return html.unescape(env.name or "").strip(), loose_json(env.body.strip())
    if env.kind == "function":
        props = _props(tools.get(html.unescape(env.name or "").strip()))
        params = {
            html.unescape(p.group("name")): _param_value(
                html.unescape(p.group("value")),
                props.get(html.unescape(p.group("name"))),
            )
            for p in PARAM.finditer(env.body)
        }
        return html.unescape(env.name or "").strip(), params
    obj = loose_json(env.body.strip())
    if not isinstance(obj, dict):
        raise ValueError("envelope body is not an object")
    name = obj.get("name", obj.get("tool"))
    args: Any = obj.get("arguments", obj.get("args", {}))
    if isinstance(args, str):
        args = loose_json(args)
    if not isinstance(name, str):
        raise ValueError("envelope has no tool name")
    return name.strip(), args


def _props(tool: ToolSpec | None) -> dict[str, Any]:
    return tool.parameters.get("properties", {}) if tool is not None else {}


def _param_value(raw: str, spec: dict[str, Any] | None) -> Any:
    # function-xml writes non-string values JSON-encoded; strings stay raw.
    if spec is not None and spec.get("type") == "string":
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _is_type(value: Any, expected: str) -> bool:
    checks = TYPE_CHECKS.get(expected)
    if checks is None:
        return True
    # bool is an int in Python but not a number in JSON Schema.
    if isinstance(value, bool) and expected != "boolean":
        return False
    return isinstance(value, checks)


def _valid(args: Any, tool: ToolSpec) -> bool:
    if not isinstance(args, dict):
        return False
    props = _props(tool)
    if any(name not in args for name in tool.parameters.get("required", [])):
        return False
    return all(
        _is_type(value, props.get(name, {}).get("type", ""))
        for name, value in args.items()
    )


def parse_text_tool_calls(text: str, tools: list[ToolSpec]) -> ParseResult:
    """Every tool call written as a text envelope in `text`, for the given tools."""
    by_name = {tool.name: tool for tool in tools}
    envelopes, dropped = find_envelopes(text)
    result = ParseResult(failures=["overlap"] * dropped)
    for env in envelopes:
        try:
            name, args = _decode(env, by_name)
        except ValueError:
            result.failures.append("unrecognized")
            continue
        tool = by_name.get(name)
        if tool is None:
            result.failures.append("unknown-tool")
        elif not _valid(args, tool):
            result.failures.append("validation-failed")
        else:
            result.calls.append(TextCall(name=name, arguments=args))
    return result
