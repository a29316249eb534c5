"""The canonical JSON that content hashes are taken of, byte for byte.

Stored lines are deduplicated by the SHA-256 of this form: if it changed, a line
re-sent after an upgrade would count twice. These bytes pin it, odd values included.
"""

from typing import Any

import pytest

from pi_dashboard.lib import jsonsafe


@pytest.mark.parametrize(
    ("value", "form"),
    [
        (
            {"n": 1e16, "m": 1e21, "f": 1e-05, "h": -0.0, "i": 2.5},
            b'{"f":0.00001,"h":-0.0,"i":2.5,"m":1e+21,"n":1e+16}',
        ),
        # Past 64 bits: the standard library's form, floats as Python writes them.
        (
            {"big": 10**30, "f": 1e-05},
            b'{"big":1000000000000000000000000000000,"f":1e-05}',
        ),
        (
            {"del": "a\x7fb", "ctl": '\x00\x01\x1f\t\n"\\/'},
            b'{"ctl":"\\u0000\\u0001\\u001f\\t\\n\\"\\\\/","del":"a\x7fb"}',
        ),
        (
            {"lone": "cut \ud83d", "accent": "é", "emoji": "\U0001f600"},
            b'{"accent":"\\u00e9","emoji":"\\ud83d\\ude00","lone":"cut \\ud83d"}',
        ),
        (
            {"z": [], "b": {"y": 1, "x": [None, True, False]}},
            b'{"b":{"x":[null,true,false],"y":1},"z":[]}',
        ),
    ],
)
def test_canonical_form_is_stable(value: Any, form: bytes) -> None:
    assert jsonsafe.canonical(value) == form


def test_equal_content_in_any_key_order_has_one_hash() -> None:
    first = jsonsafe.loads(b'{"a": 1, "b": {"d": [1, 2], "c": "x"}}')[0]
    second = jsonsafe.loads(b'{"b":{"c":"x","d":[1,2]},"a":1}')[0]
    assert jsonsafe.content_hash(first) == jsonsafe.content_hash(second)
    assert jsonsafe.content_hash(first) != jsonsafe.content_hash({"a": 2})
