"""Shared fixtures: a named cast of users and paths to the shared pi fixtures."""

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from pi_dashboard.accounts.models import Profile, Role
from tests.support.realpi import RealPi, realpi_or_skip

ROOT = Path(__file__).resolve().parent.parent
PI_FIXTURES = ROOT.parent / "shared" / "fixtures" / "pi-host"
if not PI_FIXTURES.is_dir():
    # A fresh clone has no ../shared; the demo ships an exact copy of the same data
    # (ops part), so the acceptance tests run there too instead of skipping.
    PI_FIXTURES = ROOT / "pi_dashboard" / "demo" / "data"


def make_user(username: str, role: Role | None) -> User:
    user = User.objects.create_user(
        username, f"{username}@example.test", "pw-" + username
    )
    if role is not None:
        Profile.objects.create(user=user, role=role)
    return user


@pytest.fixture
def viewer(db: None) -> User:
    return make_user("vera-viewer", Role.VIEWER)


@pytest.fixture
def operator(db: None) -> User:
    return make_user("otto-operator", Role.OPERATOR)


@pytest.fixture
def admin_user(db: None) -> User:
    return make_user("ada-admin", Role.ADMIN)


@pytest.fixture
def outsider(db: None) -> User:
    """Logged in, but deactivated: has no role at all."""
    user = make_user("oscar-outsider", None)
    user.is_active = False
    user.save()
    return user


@pytest.fixture
def pi_fixtures() -> Path:
    if not PI_FIXTURES.is_dir():
        pytest.skip(f"shared pi fixtures not found at {PI_FIXTURES}")
    return PI_FIXTURES


@pytest.fixture(scope="session")
def realpi() -> RealPi:
    """Real pi from ../shared/pi/, installed once (tests/support/realpi.py)."""
    return realpi_or_skip()
