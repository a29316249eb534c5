"""pi's request texts, byte for byte (docs/pi-host-data.md §7.2 and §7.4)."""

import json
import re
from pathlib import Path

import pytest

from pi_dashboard.probes import textproto

DATA = Path(__file__).parent / "data" / "calibration_texts.json"
REFERENCE = Path(__file__).resolve().parents[3] / "shared/reference/pi-host-data.md"
EXPECTED = json.loads(DATA.read_text())


@pytest.mark.parametrize("variant", textproto.VARIANTS)
def test_calibration_texts_match_pi_verbatim(variant: str) -> None:
    expected = EXPECTED[variant]
    token = "pi-calibration-1"
    assert (
        textproto.calibration_system_prompt(variant, token) == expected["systemPrompt"]
    )
    assert textproto.calibration_instruction(variant, token) == expected["userText"]
    assert (
        textproto.envelope(variant, "echo", {"data": token})
        == expected["expectedEnvelope"]
    )


@pytest.mark.parametrize("variant", textproto.VARIANTS)
def test_second_trial_differs_only_in_token(variant: str) -> None:
    one = textproto.calibration_system_prompt(variant, "pi-calibration-1")
    two = textproto.calibration_system_prompt(variant, "pi-calibration-2")
    assert two == one.replace("pi-calibration-1", "pi-calibration-2")


def test_copied_texts_equal_the_reference_document() -> None:
    if not REFERENCE.exists():
        pytest.skip("shared reference not present")
    text = REFERENCE.read_text()
    start = text.index("Exact request texts for trial 1")
    block = re.search(r"```json\n(.*?)\n```\n", text[start:], re.S)
    assert block is not None
    assert json.loads(block.group(1)) == EXPECTED


def test_native_instructions_are_pis() -> None:
    assert textproto.native_read_instruction("/x/p.txt") == (
        "Native tool-call capability probe: task-scale read. "
        'Provider-native call only: read once, path exactly "/x/p.txt".'
    )
    assert textproto.NATIVE_ECHO_INSTRUCTION == (
        "Native tool-call capability probe: echo-only. "
        'Provider-native call only: echo, data exactly "pi-native-probe".'
    )


def test_function_xml_escapes_and_encodes_non_strings() -> None:
    env = textproto.envelope("function-xml", "edit", {"text": 'a<b & "c"', "n": 3})
    assert env == (
        '<function name="edit"><param name="text">a&lt;b &amp; "c"</param>'
        '<param name="n">3</param></function>'
    )
