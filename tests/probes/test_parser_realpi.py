"""Our text-protocol parser against pi's own `parseTextToolCalls`, case for case.

pi's module runs under Node 24 (`--conditions=pi-source`, as pi's tests run it) in one
process for every input: the string literals of pi's own parser tests that hold an
envelope, then a seeded generator's inputs built from the same pieces (envelopes,
spellings pi repairs and those it does not, overlaps, JavaScript-only whitespace).
"""

import json
import random
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from pi_dashboard.probes import parser
from pi_dashboard.probes.textproto import ToolSpec
from tests.support.realpi import RealPi

SCRIPT = Path(__file__).with_name("realpi") / "parse_text_tool_calls.mjs"
# pi's tests use tools of these names; only the names matter to the parser.
PI_CASE_TOOLS = ["echo", "read", "write", "edit", "a", "b", "configure", "skill"]
GENERATED = 3000


@dataclass(frozen=True)
class Compared:
    text: str
    tools: list[str]
    origin: str  # "pi-test": a literal from pi's own tests; "stdin": generated
    pi: dict[str, Any]


def ours(text: str, tools: list[str]) -> dict[str, Any]:
    """Our parse in the shape pi's JSON.stringify gives (undefined fields omitted)."""
    result = parser.parse_text_tool_calls(text, [ToolSpec(n, n) for n in tools])
    calls = []
    for call in result.calls:
        out: dict[str, Any] = {"id": call.id, "name": call.name}
        out["arguments"] = call.arguments
        if call.raw_arguments is not None:
            out["rawArguments"] = call.raw_arguments
        if call.error_message is not None:
            out["errorMessage"] = call.error_message
        calls.append(out)
    shaped: dict[str, Any] = {
        "calls": calls,
        "text": result.text,
        "attempted": result.attempted,
    }
    if result.failure is not None:
        shaped["failure"] = result.failure
    loaded: dict[str, Any] = json.loads(json.dumps(shaped))
    return loaded


# The generator: pieces of envelopes pi reads, spelled right and wrong.
NAMES = ["echo", "read", "missing", "", "e&quot;cho", "echo "]
VALUES = [
    '"pi-calibration-1"',
    "'pi-calibration-1'",
    "TOK123",
    "src/x.ts",
    "./a-b:c",
    "true",
    "null",
    "12",
    "-1.5e3",
    '"it\\"s"',
    "'it\\'s'",
    '"} </pi:call> {"',
    '"a\\nb"',
    "[1, 'x']",
    '{"k": v}',
    "'",
]
KEYS = ['"data"', "data", "'data'", '"path"', "path", "a-b", "$x", "1k"]
BLANKS = ["", " ", "  ", "\n", "\t", "\u00a0", "\ufeff", "\u2028", "\x1c", "\r\n"]
PROSE = ["", "Sure.", "call echo", "}{", "```", "<pi:call>", "&amp;", "don't"]


def body(rng: random.Random) -> str:
    pick = rng.random()
    if pick < 0.1:
        return rng.choice(['"str"', "[1,2]", "5", "null", "", "{", "not json", "{}"])
    pairs = [
        f"{rng.choice(KEYS)}{rng.choice(BLANKS)}:{rng.choice(BLANKS)}{rng.choice(VALUES)}"
        for _ in range(rng.choice([1, 1, 2, 3]))
    ]
    text = "{" + rng.choice(BLANKS) + ",".join(pairs)
    text += rng.choice(["", "", ",", " ,", ", "]) + rng.choice(BLANKS) + "}"
    if rng.random() < 0.15:
        text += rng.choice([" - Echo a value", "}", " trailing", "\n"])
    return text


def json_wrapper(rng: random.Random) -> str:
    args = body(rng)
    name = json.dumps(rng.choice(NAMES))
    return rng.choice(
        [
            f'{{"name":{name},"arguments":{args}}}',
            f'{{"tool":{name},"args":{args}}}',
            f'{{"tool":{{"name":{name},"arguments":{args}}}}}',
            f'{{"name":null,"tool":{name}}}',
            f'{{"name":{name},"arguments":{json.dumps(args)}}}',
            f"{{name: {name}, arguments: {args}}}",
            f'{{"name":{name},"arguments":',
            f"{{'name': {name}, 'arguments': {args}}}",
        ]
    )


def envelope(rng: random.Random) -> str:
    kind = rng.choice([0, 0, 1, 2, 3, 0, 1, 2, 3, 4])
    quote = rng.choice(['"', "'"])
    name = rng.choice(NAMES)
    blank = rng.choice(BLANKS)
    if kind == 0:
        close = rng.choice(["</pi:call>", "</pi:call >", "</pi:call\n>", "", "</fill>"])
        space = rng.choice([" ", "  ", "\n"])
        opener = f"<pi:call{space}name={quote}{name}{quote}{blank}>"
        return f"{opener}{body(rng)}{close}"
    if kind == 1:
        close = rng.choice(["</tool_call>", "</tool_call >", ""])
        return f"<tool_call>{rng.choice(['', ' '])}{json_wrapper(rng)}{close}"
    if kind == 2:
        label = rng.choice(["tool_call", "tool", "json", "JSON", "Tool", "jſon", "js"])
        tail = rng.choice(["\n```", "```", "\n\n```", ""])
        return (
            f"```{label}{rng.choice(['', ' ', chr(0xA0)])}\n{json_wrapper(rng)}{tail}"
        )
    if kind == 3:
        params = "".join(
            f'<param name="{rng.choice(["data", "path", "", "d&amp;x", "data"])}">'
            f"{rng.choice([' v ', 'a&lt;b', '', '<b>', chr(0xFEFF) + 'x'])}</param>"
            for _ in range(rng.choice([0, 1, 1, 2]))
        )
        extra = rng.choice(["", "", " trailing", '<function name="x">'])
        return f"<function name={quote}{name}{quote}>{params}{extra}</function>"
    return rng.choice(PROSE)


def generated(seed: int, count: int) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    cases = []
    for _ in range(count):
        parts = [envelope(rng) for _ in range(rng.choice([1, 1, 2, 3]))]
        if rng.random() < 0.3 and len(parts) > 1:  # nest one envelope in another
            parts[0] = (
                parts[0][: len(parts[0]) // 2]
                + parts.pop()
                + parts[0][len(parts[0]) // 2 :]
            )
        text = rng.choice(PROSE + BLANKS).join(parts)
        tools = rng.choice([["echo"], ["echo", "read"], ["echo"], ["read"], []])
        cases.append((text, tools))
    return cases


@pytest.fixture(scope="module")
def compared(realpi: RealPi) -> list[Compared]:
    inputs = generated(13, GENERATED)
    stdin = "".join(
        json.dumps({"text": t, "tools": tools}) + "\n" for t, tools in inputs
    )
    argv = [str(realpi.node), "--conditions=pi-source", str(SCRIPT)]
    out = subprocess.run(
        [*argv, str(realpi.source), ",".join(PI_CASE_TOOLS)],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    # JSON lines: split on \n only (splitlines also splits on U+2028 and \x1c).
    lines = [json.loads(line) for line in out.stdout.split("\n") if line]
    assert sum(line["origin"] == "stdin" for line in lines) == len(inputs)
    return [Compared(x["text"], x["tools"], x["origin"], x["result"]) for x in lines]


def mismatches(cases: list[Compared]) -> list[str]:
    return [
        f"{c.text!r} tools={c.tools}\n  pi:   {c.pi}\n  ours: {ours(c.text, c.tools)}"
        for c in cases
        if ours(c.text, c.tools) != c.pi
    ]


def test_pis_own_test_cases_parse_as_pi_parses_them(compared: list[Compared]) -> None:
    cases = [c for c in compared if c.origin == "pi-test"]
    assert len(cases) >= 40, "pi's parser tests should yield their envelope inputs"
    assert mismatches(cases) == []


def test_generated_inputs_parse_as_pi_parses_them(compared: list[Compared]) -> None:
    cases = [c for c in compared if c.origin == "stdin"]
    # The generator must reach every outcome pi has, or it proves little.
    outcomes = {
        c.pi.get("failure", "calls" if c.pi["calls"] else "none") for c in cases
    }
    assert outcomes >= {"calls", "overlap", "unrecognized", "none"}
    assert mismatches(cases) == []


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        # Issue 13 item 6: a trailing comma keeps the raw string (calibration fails).
        ("<pi:call name=\"echo\">{data: 'TOK',}</pi:call>", "{data: 'TOK',}"),
        ('<pi:call name="echo">{data: TOK123}</pi:call>', {"data": "TOK123"}),
        ('<pi:call name="read">{path: src/x.ts}</pi:call>', {"path": "src/x.ts"}),
    ],
)
def test_issue_cases_read_as_pi_reads_them(text: str, arguments: Any) -> None:
    (call,) = ours(text, ["echo", "read"])["calls"]
    assert call["arguments"] == arguments
