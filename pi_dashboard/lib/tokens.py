"""Secret tokens: generated once, shown once, stored as SHA-256."""

import hashlib
import secrets


def token_generate(prefix: str) -> str:
    """A new secret such as `pid_ag_…`; 32 random bytes, URL-safe."""
    return f"{prefix}_{secrets.token_urlsafe(32)}"


def token_hash(token: str) -> str:
    # Tokens carry 256 random bits, so a fast hash is enough (no password stretching).
    return hashlib.sha256(token.encode()).hexdigest()


def token_display_prefix(token: str) -> str:
    return token[:12]
