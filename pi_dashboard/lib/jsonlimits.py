"""How deep and how large a JSON value may be, checked before and while parsing.

Every JSON entry point goes through `jsonsafe.loads`, which applies these limits, so a
hostile line is refused with its own code instead of breaking the request:
- the standard library parser recurses once per nesting level and raises
  RecursionError past about 1,000 levels (orjson refuses past 1,024 and hands the line
  over to it), so depth is counted on the raw bytes before either parser runs;
- `int()` refuses literals over 4,300 digits (ValueError) and a float literal past
  1e308 becomes `inf`, which jsonb refuses; orjson refuses integers over 64 bits.
pi writes `JSON.stringify` output: doubles (at most about 25 characters a literal)
and records a handful of levels deep, so both limits are far above anything real.
"""

import math
import re

MAX_DEPTH = 128
MAX_NUMBER_CHARS = 100

# A JSON string literal (unrolled loop: fast on long strings); brackets inside strings
# do not nest.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


class JSONLineError(ValueError):
    """A text that is not acceptable JSON; the message says where, `code` says why."""

    code = "malformed_json"


class TooDeep(JSONLineError):
    code = "too_deep"


class NumberTooLarge(JSONLineError):
    code = "number_too_large"


def depth_check(raw: bytes) -> None:
    """Raise TooDeep when arrays/objects nest more than MAX_DEPTH levels."""
    # Cheap bound first: a text with few brackets cannot nest deeply.
    if raw.count(b"[") + raw.count(b"{") <= MAX_DEPTH:
        return
    depth = 0
    for match in _BRACKET.finditer(_STRING.sub(b'""', raw)):
        if match[0] in (b"[", b"{"):
            depth += 1
            if depth > MAX_DEPTH:
                raise TooDeep(f"nested more than {MAX_DEPTH} levels deep")
        else:
            depth -= 1


def _number_text_check(text: str) -> None:
    if len(text) > MAX_NUMBER_CHARS:
        raise NumberTooLarge(
            f"a number literal of {len(text)} characters "
            f"(the limit is {MAX_NUMBER_CHARS})"
        )


def parse_int(text: str) -> int:
    """`json.loads(parse_int=...)`: refuse huge literals before int() does."""
    _number_text_check(text)
    return int(text)


def parse_float(text: str) -> float:
    """`json.loads(parse_float=...)`: refuse huge literals and what overflows."""
    _number_text_check(text)
    value = float(text)
    if not math.isfinite(value):
        raise NumberTooLarge(f"the number {text} is out of range")
    return value
