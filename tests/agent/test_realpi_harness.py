"""The real-pi harness: pi answers over RPC, and its loader reads what pi wrote."""

from pathlib import Path

import pytest

from pi_dashboard.agent import hostid
from tests.support import realpi as realpi_module
from tests.support.realpi import RealPi, store_of

RULE = "nullOptionalDrop"


def test_pi_computes_the_same_host_id_as_the_agent(realpi: RealPi) -> None:
    assert realpi.host_id == hostid.current_fingerprint().id


def test_rpc_answers_and_loader_reads_pis_write(realpi: RealPi, tmp_path: Path) -> None:
    now = "2099-01-01T00:00:00.000Z"  # never expired by the clock
    rule = {"mode": RULE, "text": "t", "addedAt": now, "lastFiredAt": now}
    store = store_of(realpi.host, {"a/m": {"rules": [rule], "teachStats": {}}}, now)
    agent = realpi.agent_dir(tmp_path, store=store)

    answers = realpi.rpc(
        agent,
        [
            {"type": "remove_tool_repair_rule", "model": "a/m", "mode": "nope"},
            {
                "type": "remove_tool_repair_rule",
                "model": "a/m",
                "mode": "nullOptionalDrop",
            },
        ],
    )

    assert [a["data"] for a in answers] == [{"removed": False}, {"removed": True}]
    loaded = realpi.load(agent / "state" / "model-adaptation.json")
    assert loaded[realpi.host_id]["a/m"]["profile"]["rules"] == []


def test_absent_pi_skips_with_a_reason_or_fails_in_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(realpi_module, "SHARED_PI", tmp_path / "no-such-dir")
    monkeypatch.delenv("PI_REQUIRE_REALPI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="real pi is absent"):
        realpi_module.realpi_or_skip()
    monkeypatch.setenv("PI_REQUIRE_REALPI", "1")
    with pytest.raises(pytest.fail.Exception, match="PI_REQUIRE_REALPI=1"):
        realpi_module.realpi_or_skip()
