"""pi's `parseTextToolCalls`, case for case (docs/pi-host-data.md §7.3).

Like pi's, it does not care which variant is being calibrated: `<pi:call>`,
`<tool_call>`, fenced `tool_call`/`tool`/`json` blocks and `<function>` are all read.
Its tolerance is exactly pi's, no more: single-quoted strings, bare keys and bare-word
values (`{data: TOK123}`) are repaired, a trailing comma is not (the body is kept as the
raw string, so the call's arguments are that string). Calls are returned whether or not
the tool is known (pi bounces those with an error); only the calibration decides what
passes. `tests/probes/test_parser_realpi.py` compares it with pi's own module.

JavaScript's regular expressions and string functions differ from Python's in what
they call whitespace, `.` and `$`; the patterns below spell JavaScript's meaning out.
"""

import json
import re
from dataclasses import dataclass, field
from typing import Any

from pi_dashboard.probes.textproto import ToolSpec

# JavaScript's \s and String.prototype.trim (WhiteSpace + LineTerminator).
_WS_CHARS = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
WS = f"[{_WS_CHARS}]"
DOT = "[^\n\r\u2028\u2029]"  # JavaScript's `.` without the s flag
_TRIM = re.compile(f"^{WS}+|{WS}+$")

PI_CALL_OPEN = re.compile(rf"<pi:call{WS}+name=([\"'])({DOT}*?)\1{WS}*>")
PI_CALL_CLOSE = re.compile(rf"</pi:call{WS}*>")
PI_CALL_ANY = re.compile(r"<pi:call\b", re.ASCII)
TOOL_CALL_TAG = re.compile(r"<tool_call>([\s\S]*?)</tool_call>")
FENCE = re.compile(
    rf"```(?:tool_call|tool|json){WS}*\n([\s\S]*?)\n?```", re.IGNORECASE | re.ASCII
)
FUNCTION = re.compile(
    rf"<function{WS}+name=([\"'])({DOT}*?)\1{WS}*>([\s\S]*?)</function{WS}*>"
)
FUNCTION_ANY = re.compile(r"</?function\b", re.IGNORECASE | re.ASCII)
PARAM = re.compile(rf"<param{WS}+name=([\"'])({DOT}*?)\1{WS}*>([\s\S]*?)</param{WS}*>")
WHOLE_OBJECT = re.compile(r"\{[\s\S]*\}\Z")
SINGLE_QUOTED = re.compile(rf"'([^'\\]*(?:\\{DOT}[^'\\]*)*)'")
BARE_KEY = re.compile(rf"([{{,]{WS}*)([A-Za-z_][A-Za-z0-9_-]*)({WS}*:)")
BARE_VALUE = re.compile(rf":{WS}*([A-Za-z_./-][A-Za-z0-9_./:-]*)(?={WS}*[,}}])")
MALFORMED_NAME = re.compile(rf"\"(?:name|tool)\"{WS}*:{WS}*\"([^\"]+)\"")


@dataclass(frozen=True)
class TextCall:
    id: str
    name: str
    # pi keeps whatever the body held: an object, another JSON value, or the raw text.
    arguments: Any
    raw_arguments: dict[str, Any] | None = None
    error_message: str | None = None


@dataclass
class ParseResult:
    calls: list[TextCall] = field(default_factory=list)
    text: str = ""
    attempted: bool = False
    # pi's reasons when nothing parsed: overlap, unrecognized.
    failure: str | None = None


@dataclass(frozen=True)
class Envelope:
    kind: str
    start: int
    end: int
    name: str | None
    body: str


class _Invalid(Exception):
    """A JSON text JSON.parse would reject."""


def js_trim(text: str) -> str:
    return _TRIM.sub("", text)


def _reject_constant(name: str) -> Any:
    raise _Invalid(name)  # NaN and Infinity are Python's, not JSON.parse's


def js_json_parse(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise _Invalid(str(exc)) from exc


def _js_stringify(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def unescape_attribute(value: str) -> str:
    for entity, char in (
        ("&quot;", '"'),
        ("&apos;", "'"),
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&amp;", "&"),
    ):
        value = value.replace(entity, char)
    return value


def unescape_xml_text(value: str) -> str:
    for entity, char in (
        ("&lt;", "<"),
        ("&gt;", ">"),
        ("&apos;", "'"),
        ("&quot;", '"'),
        ("&amp;", "&"),
    ):
        value = value.replace(entity, char)
    return value


def json_object_end(text: str, start: int) -> int | None:
    """End of the brace-balanced object at `start` (after blanks), or None."""
    index = start
    while index < len(text) and re.fullmatch(WS, text[index]):
        index += 1
    if index >= len(text) or text[index] != "{":
        return None
    depth = 0
    in_string = escaped = False
    for position in range(index, len(text)):
        char = text[position]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return position + 1
    return None


def _pi_call_envelopes(text: str) -> list[Envelope]:
    found: list[Envelope] = []
    for match in PI_CALL_OPEN.finditer(text):
        if any(env.start <= match.start() < env.end for env in found):
            continue
        body_start = match.end()
        json_end = json_object_end(text, body_start)
        close = PI_CALL_CLOSE.search(
            text, json_end if json_end is not None else body_start
        )
        if close is not None:
            before = text[
                (json_end if json_end is not None else body_start) : close.start()
            ]
            # A balanced object must be followed by the closer alone; without one, the
            # closer must not belong to a later call.
            fits = (
                js_trim(before) == ""
                if json_end is not None
                else not PI_CALL_ANY.search(before)
            )
            close = close if fits else None
        body_end = close.start() if close is not None else json_end
        if body_end is None:
            continue
        end = close.end() if close is not None else body_end
        name = unescape_attribute(match.group(2))
        found.append(
            Envelope("pi_call", match.start(), end, name, text[body_start:body_end])
        )
    return found


def find_envelopes(text: str) -> list[Envelope]:
    """Every envelope in `text`, overlapping ones included, by start."""
    found = _pi_call_envelopes(text)
    found += [
        Envelope("tool_call", m.start(), m.end(), None, m.group(1))
        for m in TOOL_CALL_TAG.finditer(text)
    ]
    found += [
        Envelope("fenced_json", m.start(), m.end(), None, m.group(1))
        for m in FENCE.finditer(text)
    ]
    found += [
        Envelope(
            "function_xml",
            m.start(),
            m.end(),
            unescape_attribute(m.group(2)),
            m.group(3),
        )
        for m in FUNCTION.finditer(text)
    ]
    return sorted(found, key=lambda env: env.start)


def _single_quoted_to_json(raw: str) -> str | None:
    trimmed = js_trim(raw)
    if not WHOLE_OBJECT.match(trimmed) or not SINGLE_QUOTED.search(trimmed):
        return None
    return SINGLE_QUOTED.sub(
        lambda m: _js_stringify(m.group(1).replace("\\'", "'")), trimmed
    )


def _bare_words_to_json(raw: str) -> str | None:
    trimmed = js_trim(raw)
    if not WHOLE_OBJECT.match(trimmed):
        return None
    changed = False

    def quote_key(m: re.Match[str]) -> str:
        nonlocal changed
        changed = True
        return f"{m.group(1)}{_js_stringify(m.group(2))}{m.group(3)}"

    def quote_value(m: re.Match[str]) -> str:
        nonlocal changed
        if m.group(1) in {"true", "false", "null"}:
            return f":{m.group(1)}"
        changed = True
        return f":{_js_stringify(m.group(1))}"

    normalized = BARE_VALUE.sub(quote_value, BARE_KEY.sub(quote_key, trimmed))
    return normalized if changed else None


def _repair_candidates(raw: str) -> list[str]:
    candidates: list[str] = []
    end = json_object_end(raw, 0)
    if end is not None and js_trim(raw[end:]):
        candidates.append(raw[:end])
    single = _single_quoted_to_json(raw)
    if single:
        candidates.append(single)
    bare = _bare_words_to_json(raw)
    if bare:
        candidates.append(bare)
    single_bare = _bare_words_to_json(single) if single else None
    if single_bare:
        candidates.append(single_bare)
    return candidates


_NOTHING = object()


def parse_json_value(raw: str) -> Any:
    """JSON.parse, then pi's bounded repairs in order; `_NOTHING` if none parses."""
    try:
        return js_json_parse(raw)
    except _Invalid:
        pass
    for candidate in _repair_candidates(raw):
        try:
            return js_json_parse(candidate)
        except _Invalid:
            continue
    return _NOTHING


def _coerce(value: Any) -> tuple[Any, dict[str, Any] | None]:
    if isinstance(value, dict):
        return value, None
    return value, {"value": value}


def _first(*values: Any) -> Any:
    """JavaScript's `a ?? b ?? …`: the first that is neither missing nor null."""
    return next((v for v in values if v is not None), None)


def _unknown_tool_message(name: str, names: list[str]) -> str | None:
    if name in names:
        return None
    return f'Unknown tool "{name}". Valid tools: {", ".join(names)}.'


def _call(
    env_name: str, args: Any, raw: dict[str, Any] | None, names: list[str], call_id: str
) -> TextCall:
    return TextCall(
        id=call_id,
        name=env_name,
        arguments=args,
        raw_arguments=raw,
        error_message=_unknown_tool_message(env_name, names),
    )


def _parse_pi_call(env: Envelope, names: list[str], call_id: str) -> TextCall | None:
    if not env.name:
        return None
    value = parse_json_value(env.body)
    if value is _NOTHING:
        text = js_trim(env.body)
        return _call(env.name, text, {"text": text}, names, call_id)
    args, raw = _coerce(value)
    return _call(env.name, args, raw, names, call_id)


def _parse_function_xml(
    env: Envelope, names: list[str], call_id: str
) -> TextCall | None:
    if not env.name or FUNCTION_ANY.search(env.body):
        return None
    params: dict[str, str] = {}
    cursor = 0
    for param in PARAM.finditer(env.body):
        if js_trim(env.body[cursor : param.start()]):
            return None
        name = unescape_attribute(param.group(2))
        if not name or name in params:
            return None
        params[name] = unescape_xml_text(js_trim(param.group(3)))
        cursor = param.end()
    if js_trim(env.body[cursor:]) or not params:
        return None
    return _call(env.name, params, None, names, call_id)


def _parse_json_envelope(
    env: Envelope, names: list[str], call_id: str
) -> TextCall | None:
    obj = parse_json_value(env.body)
    if not isinstance(obj, dict):
        found = MALFORMED_NAME.search(env.body)
        if found is None:
            return None
        text = js_trim(env.body)
        return _call(found.group(1), text, {"text": text}, names, call_id)
    tool = obj.get("tool")
    wrapped = tool if isinstance(tool, dict) else {}
    name = _first(
        obj.get("name"), tool if isinstance(tool, str) else None, wrapped.get("name")
    )
    if not isinstance(name, str):
        return None
    value = _first(
        obj.get("arguments"),
        obj.get("args"),
        wrapped.get("arguments"),
        wrapped.get("args"),
        {},
    )
    args, raw = _coerce(value)
    return _call(name, args, raw, names, call_id)


def _parse_envelope(env: Envelope, names: list[str], call_id: str) -> TextCall | None:
    if env.kind == "pi_call":
        return _parse_pi_call(env, names, call_id)
    if env.kind == "function_xml":
        return _parse_function_xml(env, names, call_id)
    return _parse_json_envelope(env, names, call_id)


def _largest_disjoint(
    parsed: list[tuple[Envelope, TextCall]],
) -> list[tuple[Envelope, TextCall]]:
    # Earliest end first gives the largest non-overlapping set (interval scheduling).
    kept: list[tuple[Envelope, TextCall]] = []
    previous_end = -1
    for entry in sorted(parsed, key=lambda e: (e[0].end, e[0].start)):
        if entry[0].start >= previous_end:
            kept.append(entry)
            previous_end = entry[0].end
    return sorted(kept, key=lambda e: e[0].start)


def _has_overlap(envelopes: list[Envelope]) -> bool:
    previous_end = -1
    for env in envelopes:
        if env.start < previous_end:
            return True
        previous_end = env.end
    return False


def parse_text_tool_calls(
    text: str, tools: list[ToolSpec], *, id_prefix: str = "text-tool"
) -> ParseResult:
    """Every tool call written as a text envelope in `text`, as pi reads it."""
    envelopes = find_envelopes(text) if tools else []
    if not envelopes:
        return ParseResult(text=text)
    names = list(dict.fromkeys(tool.name for tool in tools))
    parsed = [
        (env, call)
        for index, env in enumerate(envelopes)
        if (call := _parse_envelope(env, names, f"{id_prefix}-{index + 1}")) is not None
    ]
    selected = _largest_disjoint(parsed)
    if not selected:
        failure = "overlap" if _has_overlap(envelopes) else "unrecognized"
        return ParseResult(text=text, attempted=True, failure=failure)
    pieces: list[str] = []
    cursor = 0
    for env, _ in selected:
        pieces.append(text[cursor : env.start])
        cursor = env.end
    pieces.append(text[cursor:])
    return ParseResult(
        calls=[call for _env, call in selected],
        text=js_trim("".join(pieces)),
        attempted=True,
    )
