"""JSON that pi can write but PostgreSQL cannot store, made safe and kept faithful.

pi truncates strings by UTF-16 code unit, so a cut can split a surrogate pair and the
JSON then holds a lone escaped surrogate such as `\\ud83d` (pitfalls §35). Python's
`json` accepts it, but the string cannot be encoded to UTF-8, and PostgreSQL rejects it
in text and jsonb; the same goes for NUL (`\\u0000`). Such values are stored twice: a
sanitised copy (U+FFFD in place of each bad code point) that the database accepts, and
the exact value as ASCII-escaped JSON, which survives any store and reads back exactly.
"""

import hashlib
import json
import re
from typing import Any

import orjson

REPLACEMENT = "\ufffd"
# Lone surrogates and NUL: the code points PostgreSQL text cannot hold.
_UNSAFE = re.compile("[\ud800-\udfff\x00]")


class JSONLineError(ValueError):
    """A line that is not standard JSON; the message says where."""


def _no_constants(name: str) -> Any:
    # NaN/Infinity are not JSON (pi's JSON.stringify never writes them) and jsonb
    # refuses them.
    raise JSONLineError(f"non-standard JSON constant {name}")


def loads(data: bytes | str) -> tuple[Any, bool]:
    """Parse one JSON text; returns (value, is_safe).

    `is_safe` is False when a string anywhere holds a lone surrogate or NUL, in which
    case the value must go through `sanitise` before it reaches the database.
    orjson is the fast path; it refuses lone surrogates, so the standard library
    parses what orjson refuses, and reports the error when both refuse.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        raw = data if isinstance(data, bytes) else data.encode()
        # orjson accepts an escaped NUL; a quick byte test avoids walking the value.
        return value, b"\\u0000" not in raw or not contains_unsafe(value)
    try:
        value = json.loads(data, parse_constant=_no_constants)
    except UnicodeDecodeError as exc:
        raise JSONLineError(f"not UTF-8: {exc.reason} at byte {exc.start}") from exc
    except json.JSONDecodeError as exc:
        raise JSONLineError(
            f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    return value, not contains_unsafe(value)


def contains_unsafe(value: Any) -> bool:
    """True when any string (key or value) inside holds a lone surrogate or NUL."""
    if isinstance(value, str):
        return _UNSAFE.search(value) is not None
    if isinstance(value, dict):
        return any(contains_unsafe(k) or contains_unsafe(v) for k, v in value.items())
    if isinstance(value, list):
        return any(contains_unsafe(v) for v in value)
    return False


def sanitise(value: Any) -> Any:
    """A copy with every lone surrogate and NUL replaced by U+FFFD."""
    if isinstance(value, str):
        return _UNSAFE.sub(REPLACEMENT, value)
    if isinstance(value, dict):
        return {sanitise(k): sanitise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [sanitise(v) for v in value]
    return value


def sanitise_text(text: str) -> str:
    return _UNSAFE.sub(REPLACEMENT, text)


def canonical(value: Any) -> bytes:
    """Sorted keys, no spaces, ASCII-escaped: equal content gives equal bytes.

    orjson writes this form for most records (all-ASCII content) several times faster
    than the standard library; anything else (non-ASCII text, lone surrogates, huge
    integers) takes the standard library's `ensure_ascii` path. Which path a value
    takes depends only on the value, so the bytes stay a function of the content.
    """
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):
        text = b""
    if text and text.isascii():
        return text
    return json.dumps(
        value, sort_keys=True, ensure_ascii=True, separators=(",", ":")
    ).encode("ascii")


def content_hash(value: Any) -> bytes:
    """SHA-256 of the canonical JSON: the identity of a record's content."""
    return hashlib.sha256(canonical(value)).digest()


def escaped(value: Any) -> str:
    """The exact value as ASCII-escaped JSON (key order kept); safe in any column."""
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"))


def faithful(payload: Any, original: str) -> Any:
    """What a reader should see: the exact value when one was kept, else `payload`."""
    return json.loads(original) if original else payload


def dumps(value: Any) -> str:
    """Compact JSON text of a safe value (for jsonb parameters)."""
    return orjson.dumps(value).decode()
