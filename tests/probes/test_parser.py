"""The text-protocol parser reads every dialect, whatever variant is calibrated."""

import pytest

from pi_dashboard.probes.parser import loose_json, parse_text_tool_calls
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
    assert result.failures == []


@pytest.mark.parametrize(
    "text",
    [
        "<pi:call name='echo'>{'data': 'v'}</pi:call>",
        '<pi:call name="echo">{data: "v",}</pi:call>',
        '<tool_call>{"tool": "echo", "args": {"data": "v"}}</tool_call>',
        '<tool_call>{"name": "echo", "arguments": "{\\"data\\": \\"v\\"}"}</tool_call>',
        '```tool\n{"name":"echo","arguments":{"data":"v"}}\n```',
        "```json\n{name: \"echo\", arguments: {data: 'v'}}\n```",
    ],
)
def test_tolerated_spellings(text: str) -> None:
    calls = parse_text_tool_calls(text, TOOLS).calls
    assert [(c.name, c.arguments) for c in calls] == [("echo", {"data": "v"})]


def test_reasons_for_failures() -> None:
    result = parse_text_tool_calls(
        '<pi:call name="rm">{"path":"/"}</pi:call>'
        '<pi:call name="echo">{"data": 5}</pi:call>'
        '<pi:call name="echo">{not json at all</pi:call>',
        TOOLS,
    )
    assert result.calls == []
    assert result.failures == ["unknown-tool", "validation-failed", "unrecognized"]


def test_overlapping_envelopes_keep_the_largest_set() -> None:
    inner = '<tool_call>{"name":"echo","arguments":{"data":"a"}}</tool_call>'
    text = f"```json\n{inner}\n```\n" + '<pi:call name="echo">{"data":"b"}</pi:call>'
    result = parse_text_tool_calls(text, TOOLS)
    assert [c.arguments["data"] for c in result.calls] == ["a", "b"]
    assert result.failures == ["overlap"]


def test_parallel_calls_in_one_reply() -> None:
    text = envelope("tool-tag", "read", {"path": "/a"}) + envelope(
        "function-xml", "echo", {"data": "x"}
    )
    calls = parse_text_tool_calls(text, TOOLS).calls
    assert [c.name for c in calls] == ["read", "echo"]


def test_loose_json_keeps_escapes_and_rejects_prose() -> None:
    assert loose_json("{'a': 'it\\'s', b: \"x\\ny\"}") == {"a": "it's", "b": "x\ny"}
    with pytest.raises(ValueError, match="bare word"):
        loose_json("{a: hello}")
