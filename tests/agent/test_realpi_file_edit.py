"""The agent's file edit does what real pi's `mutateProfile` does (issue 13.1).

One store, one model per case, is given both to real pi's RPC mode and to the agent in
file-edit mode; the answers and both resulting files, read through pi's own loader,
must agree (apart from the `at` each write stamps).
"""

import copy
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from pi_dashboard.agent import isotime
from pi_dashboard.agent.commands import command_apply
from pi_dashboard.agent.config import AgentConfig
from tests.support.realpi import STORE_FILE, RealPi, store_of

NOW = datetime.now(UTC)
FRESH = isotime.iso(NOW - timedelta(days=1))
EXPIRED = isotime.iso(NOW - timedelta(days=31))
OLD_AT = isotime.iso(NOW - timedelta(days=1, hours=1))
NOTHING = "__no_such_mode__"


def rule(mode: str, fired: str = FRESH) -> dict[str, str]:
    return {
        "mode": mode,
        "text": f"{mode} text",
        "addedAt": fired,
        "lastFiredAt": fired,
    }


def stats(before: int, after: int) -> dict[str, int]:
    return {"taught": 1, "recurrenceBefore": before, "recurrenceAfter": after}


CALIBRATED = {
    "version": 1,
    "status": "calibrated",
    "variant": "tool-tag",
    "calibratedAt": FRESH,
}
LEGACY_FAILED = {
    "version": 1,
    "status": "failed",
    "attemptedAt": FRESH,
    "variantsTried": ["tool-tag", "tool-call", "fenced-json", "function-xml"],
}
CAP = ["numberFromString", "boolFromString", "propertyCaseNormalize",
       "propertyAliasNormalize", "bashCommandArgvJoin"]  # fmt: skip

# model: (profile, command kind, mode)
CASES: dict[str, tuple[dict[str, Any], str, str | None]] = {
    "t/fresh": (
        {"rules": [rule("a"), rule("b")], "teachStats": {}},
        "remove_rule",
        "a",
    ),
    "t/expired": (
        {"rules": [rule("a", EXPIRED), rule("b")], "teachStats": {}},
        "remove_rule",
        "a",
    ),
    # The case: removing one rule drops the ineffective sibling too.
    "t/ineffective": (
        {
            "rules": [rule("numberFromString"), rule("bashCommandArgvJoin")],
            "teachStats": {"bashCommandArgvJoin": stats(4, 4)},
        },
        "remove_rule",
        "numberFromString",
    ),
    "t/cap": (
        {"rules": [rule(m) for m in CAP], "teachStats": {}},
        "remove_rule",
        CAP[2],
    ),
    "t/cap-expired-miss": (
        {
            "rules": [rule(m, EXPIRED if i == 1 else FRESH) for i, m in enumerate(CAP)],
            "teachStats": {},
        },
        "remove_rule",
        NOTHING,
    ),  # fmt: skip
    "t/legacy-failed": (
        {
            "rules": [rule("a", EXPIRED), rule("b")],
            "protocol": LEGACY_FAILED,
            "teachStats": {},
        },
        "reset_protocol",
        None,
    ),  # fmt: skip
    "t/calibrated": (
        {"rules": [rule("a")], "protocol": CALIBRATED, "teachStats": {}},
        "reset_protocol",
        None,
    ),
    "t/no-protocol": (
        {"rules": [rule("a", EXPIRED)], "teachStats": {}},
        "reset_protocol",
        None,
    ),
    "t/forget": (
        {
            "rules": [rule("a"), rule("b")],
            "teachStats": {"a": stats(3, 0), "b": stats(2, 5), "c": stats(1, 0)},
        },
        "forget_mode",
        "c",
    ),
    "t/untouched": ({"rules": [rule("a", EXPIRED)], "teachStats": {}}, "", None),
}
RPC_OF = {
    "remove_rule": "remove_tool_repair_rule",
    "reset_protocol": "reset_tool_protocol",
}


def pi_command(model: str, kind: str, mode: str | None) -> dict[str, Any]:
    if kind == "reset_protocol":
        return {"type": "reset_tool_protocol", "model": model}
    # pi has no forget: its mutation alone is a remove of a mode nobody has.
    mode = NOTHING if kind == "forget_mode" else mode
    return {"type": "remove_tool_repair_rule", "model": model, "mode": mode}


def agent_command(model: str, kind: str, mode: str | None) -> dict[str, Any]:
    return {
        "id": f"cmd-{model}",
        "kind": kind,
        "model": model,
        "params": {"mode": mode} if mode else {},
        "expires_at": isotime.iso(datetime.now(UTC) + timedelta(minutes=5)),
    }


def without_at(hosts: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {
        h: {m: {k: v for k, v in e.items() if k != "at"} for m, e in models.items()}
        for h, models in hosts.items()
    }


@pytest.fixture
def same_store(realpi: RealPi, tmp_path: Path) -> tuple[Path, Path]:
    """Two agent dirs holding the same store: one for pi, one for our agent."""
    profiles = {model: profile for model, (profile, _, _) in CASES.items()}
    store = store_of(realpi.host, profiles, OLD_AT)
    # Another host's bucket, which neither may touch.
    store["hosts"]["other-host-1c-1g"] = store_of(
        {"id": "other-host-1c-1g", "cpu": "x", "cores": 1, "totalMemGb": 1},
        {"t/fresh": copy.deepcopy(profiles["t/fresh"])},
        OLD_AT,
    )["hosts"]["other-host-1c-1g"]
    return (
        realpi.agent_dir(tmp_path, store=store),
        realpi.agent_dir(tmp_path, store=store),
    )


def test_file_edit_answers_and_writes_what_pi_does(
    realpi: RealPi,
    same_store: tuple[Path, Path],
    make_config: Callable[..., AgentConfig],
) -> None:
    pi_dir, our_dir = same_store
    commanded = {m: c for m, c in CASES.items() if c[1]}
    commanded["t/not-in-store"] = ({}, "remove_rule", "a")

    pi_answers = realpi.rpc(
        pi_dir, [pi_command(m, k, md) for m, (_, k, md) in commanded.items()]
    )
    cfg = make_config(state_dir=our_dir / "state")
    our_acks = {
        m: command_apply(cfg, realpi.host_id, agent_command(m, k, md))
        for m, (_, k, md) in commanded.items()
    }

    for (model, (_, kind, _)), pi in zip(commanded.items(), pi_answers, strict=True):
        ack = our_acks[model]
        assert ack.status == "applied", (model, ack.detail)
        if kind == "forget_mode":
            assert ack.result["cleared"] is True
        else:
            assert ack.result["removed"] is pi["data"]["removed"], model

    pi_file = realpi.load(pi_dir / "state" / STORE_FILE)
    ours = realpi.load(our_dir / "state" / STORE_FILE)
    # What pi read back, case by case, is what pi's own mutation wrote...
    expected = copy.deepcopy(pi_file)
    del expected[realpi.host_id]["t/forget"]["profile"]["teachStats"]["c"]
    assert without_at(ours) == without_at(expected)
    # ...and an entry was rewritten (new `at`) exactly where pi rewrote it.
    for model, entry in pi_file[realpi.host_id].items():
        assert (ours[realpi.host_id][model]["at"] == OLD_AT) is (
            entry["at"] == OLD_AT
        ), model
    # Sanity: the cases do exercise pi's pruning.
    mine = pi_file[realpi.host_id]
    assert [r["mode"] for r in mine["t/ineffective"]["profile"]["rules"]] == []
    assert [r["mode"] for r in mine["t/expired"]["profile"]["rules"]] == ["b"]
    assert mine["t/untouched"]["at"] == OLD_AT
    assert json.loads((our_dir / "state" / STORE_FILE).read_text())["version"] == 1
