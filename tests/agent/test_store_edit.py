"""File-mode edits of pi's store: one entry changes, every other byte stays."""

import json
from pathlib import Path

import pytest

from pi_dashboard.agent import store_edit
from pi_dashboard.agent.lockfile import lock_path
from tests.agent.conftest import AMD, APPLE, FIXTURE_NOW, XEON, bucket_text


def edit(store: Path, model: str, change: store_edit.Edit, host: str = AMD) -> bool:
    return store_edit.store_edit_entry(
        path=store,
        host_id=host,
        model=model,
        edit=change,
        stale=10,
        wait=2,
        now=FIXTURE_NOW,
    )


def entry_text(text: str, host: str, model: str) -> str:
    bucket = bucket_text(text, host)
    marker = json.dumps(model) + ":"
    start = bucket.index(marker) + len(marker)
    _, end = json.JSONDecoder().raw_decode(bucket, start)
    return bucket[start:end]


def test_remove_rule_touches_only_that_entry(shared_store: Path) -> None:
    before = shared_store.read_text()
    doc = json.loads(before)
    entry = doc["hosts"][AMD]["openai/gpt-5.1"]
    mode = entry["profile"]["rules"][0]["mode"]

    assert edit(shared_store, "openai/gpt-5.1", store_edit.remove_rule(mode)) is True

    after = shared_store.read_text()
    for host in (APPLE, XEON):  # other hosts: byte-for-byte identical
        assert bucket_text(after, host) == bucket_text(before, host)
    for model in doc["hosts"][AMD]:
        if model != "openai/gpt-5.1":
            assert entry_text(after, AMD, model) == entry_text(before, AMD, model)
    new = json.loads(after)["hosts"][AMD]["openai/gpt-5.1"]
    assert [r["mode"] for r in new["profile"]["rules"]] == [
        r["mode"] for r in entry["profile"]["rules"][1:]
    ]
    assert new["at"] > entry["at"]  # pi bumps `at` on every mutation
    # Nothing else in the entry changed, and nothing was dropped or nulled.
    entry["profile"]["rules"] = entry["profile"]["rules"][1:]
    assert {k: v for k, v in new.items() if k != "at"} == {
        k: v for k, v in entry.items() if k != "at"
    }
    assert ":null" not in after
    assert after.endswith("}\n")
    assert not lock_path(shared_store).exists()
    assert not list(shared_store.parent.glob("*.tmp"))


def test_removing_again_is_harmless(shared_store: Path) -> None:
    mode = json.loads(shared_store.read_text())["hosts"][AMD]["openai/gpt-5.1"][
        "profile"
    ]["rules"][0]["mode"]
    assert edit(shared_store, "openai/gpt-5.1", store_edit.remove_rule(mode))
    once = shared_store.read_bytes()
    assert not edit(shared_store, "openai/gpt-5.1", store_edit.remove_rule(mode))
    assert shared_store.read_bytes() == once  # not rewritten at all


def test_reset_protocol_and_forget_mode(shared_store: Path) -> None:
    before = shared_store.read_text()
    model = "llamacpp/glm-4.6"  # calibrated on this host
    entry = json.loads(before)["hosts"][AMD][model]
    assert "protocol" in entry["profile"]
    assert edit(shared_store, model, store_edit.reset_protocol())
    mode = next(iter(entry["profile"]["teachStats"]))
    assert edit(shared_store, model, store_edit.forget_mode(mode))
    after = shared_store.read_text()
    new = json.loads(after)["hosts"][AMD][model]
    assert "protocol" not in new["profile"]
    assert mode not in new["profile"]["teachStats"]
    assert new["profile"]["toolProbe"] == entry["profile"]["toolProbe"]  # untouched
    assert new["profile"]["rules"] == entry["profile"]["rules"]
    for host in (APPLE, XEON):
        assert bucket_text(after, host) == bucket_text(before, host)
    assert not edit(shared_store, model, store_edit.reset_protocol())


def test_the_same_model_on_another_host_is_not_ours(shared_store: Path) -> None:
    before = shared_store.read_bytes()
    # XEON also runs llamacpp/glm-4.6, but this agent is the AMD host.
    doc = json.loads(before)
    assert "protocol" in doc["hosts"][XEON]["llamacpp/glm-4.6"]["profile"]
    assert not edit(shared_store, "ollama/gpt-oss:20b", store_edit.reset_protocol())
    assert shared_store.read_bytes() == before


def test_unknown_model_or_host_changes_nothing(shared_store: Path) -> None:
    before = shared_store.read_bytes()
    assert not edit(shared_store, "nope/model", store_edit.remove_rule("x"))
    assert not edit(
        shared_store, "openai/gpt-5.1", store_edit.remove_rule("x"), host="h-1c-1g"
    )
    assert shared_store.read_bytes() == before


@pytest.mark.parametrize(
    "content", [b"{not json", b'{"version":2,"hosts":{}}', b'{"version":1}']
)
def test_a_store_pi_would_discard_is_never_overwritten(
    amd_state: Path, content: bytes
) -> None:
    store = amd_state / "model-adaptation.json"
    store.write_bytes(content)
    with pytest.raises(store_edit.StoreUnreadable):
        edit(store, "openai/gpt-5.1", store_edit.remove_rule("x"))
    assert store.read_bytes() == content
    assert not lock_path(store).exists()


def test_last_and_only_members_are_cut_cleanly(tmp_path: Path) -> None:
    T = "2026-08-18T00:00:00.000Z"  # noqa: N806
    store = tmp_path / "model-adaptation.json"
    entry = {
        "model": "p/m",
        "profile": {
            "rules": [{"mode": "a", "text": "t", "addedAt": T, "lastFiredAt": T}],
            "protocol": {"version": 1, "variant": "tool-tag", "calibratedAt": T},
            "teachStats": {
                "a": {"taught": 1, "recurrenceBefore": 3, "recurrenceAfter": 0}
            },
        },
        "at": "2026-01-01T00:00:00.000Z",
        "host": {"id": "h-1c-1g", "cpu": "h", "cores": 1, "totalMemGb": 1},
    }
    doc = {"version": 1, "hosts": {"h-1c-1g": {"p/m": entry}}}
    store.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    for change in (
        store_edit.remove_rule("a"),
        store_edit.reset_protocol(),
        store_edit.forget_mode("a"),
    ):
        assert edit(store, "p/m", change, host="h-1c-1g")
    profile = json.loads(store.read_text())["hosts"]["h-1c-1g"]["p/m"]["profile"]
    assert profile == {"rules": [], "teachStats": {}}
    assert '"rules":[],"teachStats":{}' in store.read_text()
