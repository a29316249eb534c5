"""Edit a JSON document in place by splicing, leaving every other byte as it was.

pi owns `model-adaptation.json`; the agent changes one model's entry of its own host.
Re-serialising the whole document could change bytes of other hosts (number formats,
escapes), so edits are made on the text: locate the span of the value to change and
replace or cut out just that span.
"""

import json
from dataclasses import dataclass

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"


class JsonShapeError(ValueError):
    pass


@dataclass(frozen=True)
class Member:
    key: str
    key_start: int
    value_start: int
    value_end: int


@dataclass(frozen=True)
class Splice:
    start: int
    end: int
    text: str


def _ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def _expect(text: str, i: int, char: str) -> None:
    if i >= len(text) or text[i] != char:
        raise JsonShapeError(f"expected {char!r} at offset {i}")


def object_members(text: str, start: int) -> list[Member]:
    """Members of the object whose `{` is at `start`, with their spans."""
    _expect(text, start, "{")
    members: list[Member] = []
    i = _ws(text, start + 1)
    if text[i : i + 1] == "}":
        return members
    while True:
        _expect(text, i, '"')
        key_start = i
        key, i = json.decoder.scanstring(text, i + 1)  # type: ignore[attr-defined]
        i = _ws(text, i)
        _expect(text, i, ":")
        value_start = _ws(text, i + 1)
        _, value_end = _DECODER.raw_decode(text, value_start)
        members.append(Member(key, key_start, value_start, value_end))
        i = _ws(text, value_end)
        if text[i : i + 1] == ",":
            i = _ws(text, i + 1)
            continue
        _expect(text, i, "}")
        break
    return members


def array_elements(text: str, start: int) -> list[tuple[int, int]]:
    _expect(text, start, "[")
    spans: list[tuple[int, int]] = []
    i = _ws(text, start + 1)
    if text[i : i + 1] == "]":
        return spans
    while True:
        _, end = _DECODER.raw_decode(text, i)
        spans.append((i, end))
        i = _ws(text, end)
        if text[i : i + 1] == ",":
            i = _ws(text, i + 1)
            continue
        _expect(text, i, "]")
        return spans


def member(text: str, obj_start: int, key: str) -> Member | None:
    for m in object_members(text, obj_start):
        if m.key == key:
            return m
    return None


def cut_member(text: str, obj_start: int, key: str) -> Splice | None:
    """The splice that removes `"key":value` and one neighbouring comma."""
    members = object_members(text, obj_start)
    starts = [(m.key_start, m.value_end) for m in members]
    idx = next((i for i, m in enumerate(members) if m.key == key), None)
    return None if idx is None else _cut(starts, idx)


def cut_element(text: str, arr_start: int, index: int) -> Splice:
    return _cut(array_elements(text, arr_start), index)


def _cut(spans: list[tuple[int, int]], idx: int) -> Splice:
    start, end = spans[idx]
    if idx + 1 < len(spans):
        return Splice(start, spans[idx + 1][0], "")  # up to the next item
    if idx > 0:
        return Splice(spans[idx - 1][1], end, "")  # from the previous item's end
    return Splice(start, end, "")


def replace_value(m: Member, value: object) -> Splice:
    return Splice(m.value_start, m.value_end, to_json(value))


def to_json(value: object) -> str:
    """JavaScript `JSON.stringify` style: compact, non-ASCII kept as is."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def apply_splices(text: str, splices: list[Splice]) -> str:
    ordered = sorted(splices, key=lambda s: s.start, reverse=True)
    for later, earlier in zip(ordered, ordered[1:], strict=False):
        if earlier.end > later.start:
            raise JsonShapeError("overlapping edits")
    for s in ordered:
        text = text[: s.start] + s.text + text[s.end :]
    return text
