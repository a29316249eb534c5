"""Validators for the published ingest schemas, read straight from their files."""

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from pi_dashboard.demo.shift import host_ids

SCHEMA_DIR = Path(__file__).resolve().parents[2] / "pi_dashboard" / "ingest" / "schemas"

Check = Callable[[str, Any], None]


@pytest.fixture(scope="session")
def schema_check() -> Check:
    """`check(name, instance)` raises unless `instance` is valid for schema `name`."""
    if not (SCHEMA_DIR / "adaptation-store.json").exists():
        pytest.skip("ingest schemas not present yet")
    validators: dict[str, Draft202012Validator] = {}

    def check(name: str, instance: Any) -> None:
        if name not in validators:
            schema = json.loads((SCHEMA_DIR / f"{name}.json").read_text())
            validators[name] = Draft202012Validator(schema)
        validators[name].validate(instance)

    return check


@pytest.fixture(params=host_ids(), ids=lambda h: h.split("-")[0])
def host(request: pytest.FixtureRequest) -> str:
    return str(request.param)
