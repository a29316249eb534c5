"""From a request body to checked records: size limits, gunzip, one result per line.

Pure functions, no database: `lines_check` turns the body of a JSON Lines batch into
accepted records (parsed, validated, content-hashed, made safe for PostgreSQL) and
rejections that name the line and the reason.
"""

import hashlib
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.http import HttpRequest

from pi_dashboard.ingest import contracts
from pi_dashboard.lib import jsonsafe
from pi_dashboard.lib.errors import DomainError

# Reading at most this much of an over-limit body before answering 413 lets clients
# that send it anyway see the answer instead of a reset connection.
DRAIN_LIMIT = 64 * 1024 * 1024
# A line is one pi record; 1 MiB is far above anything pi writes (its own log refuses
# single records over 4 MiB, and event lines are bounded to about 60 KiB).
DEFAULT_MAX_LINE_BYTES = 1024 * 1024


class TooLarge(DomainError):
    status = 413
    code = "too_large"


class BadEncoding(DomainError):
    status = 400
    code = "bad_encoding"


class UnsupportedMediaType(DomainError):
    status = 415
    code = "unsupported_media_type"


# What ingest reads: JSON documents and JSON Lines (under their usual names).
JSON_MEDIA_TYPES = frozenset(
    {
        "application/json",
        "application/x-ndjson",
        "application/ndjson",
        "application/jsonl",
        "application/x-jsonlines",
    }
)


def media_type_check(request: HttpRequest) -> None:
    """Refuse (415) a body that does not say it is JSON or JSON Lines."""
    media = (request.content_type or "").split(";")[0].strip().lower()
    if media not in JSON_MEDIA_TYPES and not media.endswith("+json"):
        shown = jsonsafe.sanitise_text(media[:100]) or "none"
        raise UnsupportedMediaType(
            f"Content-Type {shown!r} is not JSON; send application/json "
            "or application/x-ndjson."
        )


@dataclass(slots=True)
class Rejection:
    line: int
    code: str
    reason: str


@dataclass(slots=True)
class Accepted:
    line: int
    value: dict[str, Any]  # safe for PostgreSQL (sanitised when needed)
    payload: str  # `value` as JSON text, for the jsonb column
    original: str  # exact record as ASCII-escaped JSON when `value` was sanitised
    digest: bytes  # SHA-256 of the canonical JSON of the exact record
    schema: str


# Picks the schema of a parsed object, or raises Unclassified with the reason.
Classifier = Callable[[dict[str, Any]], str]


class Unclassified(ValueError):
    pass


def max_bytes() -> int:
    return int(settings.PI_INGEST_MAX_BYTES)


def max_lines() -> int:
    return int(settings.PI_INGEST_MAX_LINES)


def max_line_bytes() -> int:
    return int(getattr(settings, "PI_INGEST_MAX_LINE_BYTES", DEFAULT_MAX_LINE_BYTES))


def body_decode(raw: bytes, *, content_encoding: str) -> bytes:
    """The body after Content-Encoding, refused past the byte limit (gzip bombs too)."""
    limit = max_bytes()
    encoding = content_encoding.strip().lower()
    if encoding in ("", "identity"):
        if len(raw) > limit:
            raise TooLarge(f"The body is over {limit} bytes.")
        return raw
    if encoding not in ("gzip", "x-gzip"):
        raise BadEncoding(f"Unsupported Content-Encoding {encoding!r}; use gzip.")
    return gunzip_capped(raw, limit=limit)


def gunzip_capped(data: bytes, *, limit: int) -> bytes:
    """Decompress gzip (members may be concatenated), never past `limit` bytes."""
    out = bytearray()
    while data:
        inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += inflater.decompress(data, limit + 1 - len(out))
        except zlib.error as exc:
            raise BadEncoding(f"The body is not valid gzip: {exc}") from exc
        if len(out) > limit or inflater.unconsumed_tail:
            raise TooLarge(f"The body is over {limit} bytes after gunzip.")
        if not inflater.eof:
            raise BadEncoding("The gzip body is truncated.")
        data = inflater.unused_data
    return bytes(out)


def request_body(request: HttpRequest) -> bytes:
    """The request body after gunzip, refused past the configured limits (413) or
    when it does not say it is JSON (415)."""
    media_type_check(request)
    limit = max_bytes()
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    if length > limit:
        remaining = min(length, DRAIN_LIMIT)
        while remaining > 0 and (chunk := request.read(min(remaining, 1 << 20))):
            remaining -= len(chunk)
        raise TooLarge(f"The body is over {limit} bytes.")
    raw = request.read(limit + 1)
    encoding = request.headers.get("Content-Encoding", "")
    return body_decode(raw, content_encoding=encoding)


def lines_split(body: bytes) -> list[tuple[int, bytes]]:
    """(1-based line number, bytes) of every non-blank line; refused past the limit."""
    numbered = [
        (number, line)
        for number, line in enumerate(body.split(b"\n"), start=1)
        if line.strip()
    ]
    if len(numbered) > max_lines():
        raise TooLarge(
            f"The batch has {len(numbered)} lines; the limit is {max_lines()}."
        )
    return numbered


def line_check(
    number: int, raw: bytes, classify: Classifier, *, limit: int
) -> Accepted | Rejection:
    """Parse, validate and hash one line."""
    if len(raw) > limit:
        return Rejection(number, "line_too_large", f"The line is over {limit} bytes.")
    try:
        value, is_safe = jsonsafe.loads(raw)
    except jsonsafe.JSONLineError as exc:
        # Valid JSON past a limit (too deep, a huge number) keeps its own code.
        what = "Not valid JSON" if exc.code == "malformed_json" else "JSON over a limit"
        return Rejection(number, exc.code, f"{what}: {exc}.")
    if not isinstance(value, dict):
        kind = type(value).__name__
        return Rejection(number, "not_an_object", f"A record must be an object: {kind}")
    try:
        schema = classify(value)
    except Unclassified as exc:
        return Rejection(number, "unknown_kind", jsonsafe.sanitise_text(str(exc)))
    problem = contracts.violation(schema, value)
    if problem is not None:
        reason = f"Does not match schema {schema}: {problem}"
        return Rejection(number, "schema_violation", jsonsafe.sanitise_text(reason))
    canonical = jsonsafe.canonical(value)
    digest = hashlib.sha256(canonical).digest()
    if is_safe:
        # The canonical text is also the payload: jsonb keeps no key order or spacing.
        return Accepted(number, value, canonical.decode("ascii"), "", digest, schema)
    safe = jsonsafe.sanitise(value)
    original = jsonsafe.escaped(value)
    return Accepted(number, safe, jsonsafe.dumps(safe), original, digest, schema)


def lines_check(
    body: bytes, classify: Classifier
) -> tuple[list[Accepted], list[Rejection]]:
    limit = max_line_bytes()
    accepted: list[Accepted] = []
    rejected: list[Rejection] = []
    for number, raw in lines_split(body):
        result = line_check(number, raw, classify, limit=limit)
        if isinstance(result, Accepted):
            accepted.append(result)
        else:
            rejected.append(result)
    return accepted, rejected
