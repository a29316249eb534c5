"""The text-protocol parser reads every dialect, whatever variant is calibrated.

Case-for-case agreement with pi's own parser is in `test_parser_realpi.py`; these
name the behaviours a reader should know without running Node.
"""

import pytest

from pi_dashboard.probes.parser import parse_text_tool_calls
from pi_dashboard.probes.textproto import ECHO_TOOL, READ_TOOL, VARIANTS, envelope

TOOLS = [ECHO_TOOL, READ_TOOL]


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_dialect_round_trips(variant: str) -> None:
    text = "Sure, calling it.\n" + envelope(
        variant, "echo", {"data": "pi-calibration-2"}
    )
    result = parse_text_tool_calls(text, TOOLS)
    assert [(c.name, c.arguments) for c in result.calls] == [
        ("echo", {"data": "pi-calibration-2"})
    ]
    assert result.text == "Sure, calling it."
    assert result.failure is None


@pytest.mark.parametrize(
    "text",
    [
        "<pi:call name='echo'>{'data': 'v'}</pi:call>",
        '<pi:call name="echo">{data: "v"}</pi:call>',
        '<pi:call name="echo">{data: v}</pi:call>',
        '<tool_call>{"tool": "echo", "args": {"data": "v"}}</tool_call>',
        '```tool\n{"name":"echo","arguments":{"data":"v"}}\n```',
        "```json\n{name: \"echo\", arguments: {data: 'v'}}\n```",
    ],
)
def test_tolerated_spellings(text: str) -> None:
    calls = parse_text_tool_calls(text, TOOLS).calls
    assert [(c.name, c.arguments) for c in calls] == [("echo", {"data": "v"})]


def test_a_trailing_comma_keeps_the_raw_text_as_pi_does() -> None:
    (call,) = parse_text_tool_calls(
        "<pi:call name=\"echo\">{data: 'TOK',}</pi:call>", TOOLS
    ).calls
    assert call.arguments == "{data: 'TOK',}"
    assert call.raw_arguments == {"text": "{data: 'TOK',}"}


def test_unknown_tools_are_calls_with_pis_error() -> None:
    (call,) = parse_text_tool_calls(
        '<pi:call name="rm">{"path":"/"}</pi:call>', TOOLS
    ).calls
    assert call.error_message == 'Unknown tool "rm". Valid tools: echo, read.'


def test_nothing_parsed_names_the_reason() -> None:
    unrecognized = parse_text_tool_calls("<tool_call>no name</tool_call>", TOOLS)
    overlap = parse_text_tool_calls(
        "```tool\n<tool_call>no name here</tool_call>\n```", TOOLS
    )
    assert (unrecognized.attempted, unrecognized.failure) == (True, "unrecognized")
    assert (overlap.attempted, overlap.failure) == (True, "overlap")


def test_overlapping_envelopes_keep_the_largest_set() -> None:
    inner = '<tool_call>{"name":"echo","arguments":{"data":"a"}}</tool_call>'
    text = f"```json\n{inner}\n```\n" + '<pi:call name="echo">{"data":"b"}</pi:call>'
    result = parse_text_tool_calls(text, TOOLS)
    assert [c.arguments["data"] for c in result.calls] == ["a", "b"]


def test_parallel_calls_in_one_reply() -> None:
    text = envelope("tool-tag", "read", {"path": "/a"}) + envelope(
        "function-xml", "echo", {"data": "x"}
    )
    calls = parse_text_tool_calls(text, TOOLS).calls
    assert [c.name for c in calls] == ["read", "echo"]
