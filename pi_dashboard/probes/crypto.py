"""Secrets at rest (API keys, secret headers, webhook URLs): Fernet.

The key is settings.PI_FIELD_ENCRYPTION_KEY, or derived from SECRET_KEY when unset
(so rotating SECRET_KEY then means re-entering the secrets; decrypt says so).
"""

import base64
import hashlib
import json

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings

from pi_dashboard.lib.errors import DomainError


class SecretUnreadable(DomainError):
    code = "secret_unreadable"


def fernet() -> Fernet:
    key = getattr(settings, "PI_FIELD_ENCRYPTION_KEY", "")
    if not key:
        digest = hashlib.sha256(
            b"pi-dashboard field encryption\0" + settings.SECRET_KEY.encode()
        ).digest()
        key = base64.urlsafe_b64encode(digest).decode()
    return Fernet(key.encode() if isinstance(key, str) else key)


def encrypt(plain: str) -> str:
    return fernet().encrypt(plain.encode()).decode() if plain else ""


def decrypt(token: str) -> str:
    if not token:
        return ""
    try:
        return fernet().decrypt(token.encode()).decode()
    except InvalidToken as exc:
        raise SecretUnreadable(
            "A stored secret cannot be decrypted (the encryption key changed); "
            "enter it again."
        ) from exc


def encrypt_json(value: dict[str, str]) -> str:
    return encrypt(json.dumps(value)) if value else ""


def decrypt_json(token: str) -> dict[str, str]:
    plain = decrypt(token)
    return dict(json.loads(plain)) if plain else {}
