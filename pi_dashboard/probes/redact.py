"""Transcripts are shown to every viewer: strip secrets and bound their size first."""

import re
from collections.abc import Iterable, Mapping

REDACTED = "[REDACTED]"
SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|password", re.I)
SECRET_PATTERNS = (
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),  # OpenAI-style keys (sk-…, sk-proj-…)
    re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}"),
    re.compile(r"\b(?:ghp|gho|xox[abpr]|pid_(?:op|ag))_[A-Za-z0-9_\-]{8,}"),
)
MAX_TRANSCRIPT_CHARS = 16_000


def redact_text(text: str, secrets: Iterable[str] = ()) -> str:
    for secret in secrets:
        # Very short values would blank out ordinary words; they are not real secrets.
        if secret and len(secret) >= 6:
            text = text.replace(secret, REDACTED)
    for pattern in SECRET_PATTERNS:
        text = pattern.sub(
            lambda m: (
                f"{m.group(1)} {REDACTED}"
                if m.lastindex and m.group(1).lower() in {"bearer", "basic"}
                else REDACTED
            ),
            text,
        )
    return text


def redact_headers(
    headers: Mapping[str, str], secrets: Iterable[str] = ()
) -> dict[str, str]:
    secrets = list(secrets)
    return {
        name: REDACTED if SECRET_HEADER.search(name) else redact_text(value, secrets)
        for name, value in headers.items()
    }


def bound(text: str, limit: int = MAX_TRANSCRIPT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n…[truncated {len(text) - limit} characters]"
