"""Edit pi's `model-adaptation.json` the way pi does, touching one entry only.

Under pi's lock: read, change only `hosts[<own host>][<model>]` (and that entry's `at`,
as every pi mutation does), write `<file>.<pid>.<uuid>.tmp`, rename, release. Like
pi's `mutateProfile`, the edit first prunes that model's expired or ineffective rules
(`pi_profile`), then applies the change; it writes when either changed something and
answers whether the change applied (pi's `removed`). The edit is spliced into the
text (see `jsonspan`), so every other host, model and field keeps its exact bytes; the
result is re-parsed and compared with the intended document before it replaces the
file. After taking over a stale lock the write is re-read, at once and again a moment
later, because the presumed-dead holder may still write its older copy back.
"""

import json
import os
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pi_dashboard.agent import isotime, jsonspan, pi_profile
from pi_dashboard.agent.errors import AgentError
from pi_dashboard.agent.lockfile import HeldLock, locked


class StoreUnreadable(AgentError):
    pass


@dataclass(frozen=True)
class EntryView:
    """Where one model's entry sits in the store text, plus its parsed value."""

    text: str
    entry_start: int
    value: dict[str, Any]

    def member(self, *keys: str) -> jsonspan.Member | None:
        start, found = self.entry_start, None
        for key in keys:
            found = jsonspan.member(self.text, start, key)
            if found is None:
                return None
            start = found.value_start
        return found

    @property
    def profile(self) -> dict[str, Any]:
        profile: dict[str, Any] = self.value["profile"]
        return profile

    @property
    def rules(self) -> list[Any]:
        rules = self.profile.get("rules")
        return rules if isinstance(rules, list) else []


@dataclass(frozen=True)
class Change:
    """What an edit asks for; `drop_rules` are indexes into the entry's rules."""

    drop_rules: frozenset[int] = field(default_factory=frozenset)
    drop_protocol: bool = False
    drop_teach_mode: str | None = None


# An edit sees the entry and the indexes of the rules pi keeps after pruning
# (`active`); it returns the change, or None when there is nothing to change.
Edit = Callable[[EntryView, list[int]], Change | None]


def remove_rule(mode: str) -> Edit:
    def edit(view: EntryView, active: list[int]) -> Change | None:
        hits = frozenset(i for i in active if view.rules[i]["mode"] == mode)
        return Change(drop_rules=hits) if hits else None

    return edit


def reset_protocol() -> Edit:
    def edit(view: EntryView, active: list[int]) -> Change | None:
        protocol = view.profile.get("protocol")
        return Change(drop_protocol=True) if pi_profile.is_protocol(protocol) else None

    return edit


def forget_mode(mode: str) -> Edit:
    """pi's mutation (the prune) plus clearing that mode's teach statistics."""

    def edit(view: EntryView, active: list[int]) -> Change | None:
        stats = view.profile.get("teachStats")
        found = isinstance(stats, dict) and mode in stats
        return Change(drop_teach_mode=mode) if found else None

    return edit


@dataclass(frozen=True)
class EditOutcome:
    applied: bool  # pi's answer: the requested change was made
    written: bool  # the file was rewritten (the change, or only the prune)
    took_over: bool = False  # the lock was taken over from a stale holder
    survived: bool | None = None  # after a takeover: our write is still the file's


def store_edit_entry(
    *,
    path: Path,
    host_id: str,
    model: str,
    edit: Edit,
    stale: float = 10.0,
    wait: float = 15.0,
    now: datetime | None = None,
) -> bool:
    """Apply `edit` to one entry under pi's lock; True if the change applied."""
    return store_edit_apply(
        path=path,
        host_id=host_id,
        model=model,
        edit=edit,
        stale=stale,
        wait=wait,
        now=now,
        recheck=0.0,
    ).applied


def store_edit_apply(
    *,
    path: Path,
    host_id: str,
    model: str,
    edit: Edit,
    stale: float = 10.0,
    wait: float = 15.0,
    now: datetime | None = None,
    recheck: float = 2.0,
) -> EditOutcome:
    """Apply `edit` as pi's `mutateProfile` would; after a stale-lock takeover,
    check the write survived (re-read now and again `recheck` seconds later)."""
    now = now or datetime.now(UTC)
    with locked(path, stale=stale, wait=wait) as held:
        text, doc = _read_store(path)
        entry_m = _locate_entry(text, host_id, model)
        entry = doc["hosts"].get(host_id, {}).get(model)
        if entry_m is None or not _pi_reads(entry, host_id, model):
            return EditOutcome(applied=False, written=False, took_over=held.took_over)
        view = EntryView(text, entry_m.value_start, entry)
        splices, applied = _mutate(view, edit, now)
        if splices is None:
            return EditOutcome(applied=False, written=False, took_over=held.took_over)
        new_text = jsonspan.apply_splices(text, splices)
        _verify(new_text, doc)
        _write_atomic(path, new_text.encode("utf-8"), held)
        took_over = held.took_over
    if not took_over:
        return EditOutcome(applied=applied, written=True)
    return EditOutcome(
        applied=applied,
        written=True,
        took_over=True,
        survived=_survives(path, host_id, model, entry, recheck),
    )


def _pi_reads(entry: Any, host_id: str, model: str) -> bool:
    """pi's `parseAdaptationHost` keeps this entry (else pi sees no such model)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("profile"), dict):
        return False
    host = entry.get("host")
    return (
        entry.get("model") == model
        and isinstance(entry.get("at"), str)
        and isinstance(host, dict)
        and host.get("id") == host_id
    )


def _mutate(
    view: EntryView, edit: Edit, now: datetime
) -> tuple[list[jsonspan.Splice] | None, bool]:
    """pi's `mutateProfile`: prune, apply; (splices, applied), or (None, False)
    when neither the prune nor the edit changes anything."""
    rules, stats = view.rules, pi_profile.teach_stats(view.profile)
    valid = [i for i, r in enumerate(rules) if pi_profile.is_rule(r)]
    active = [i for i in valid if pi_profile.rule_retained(rules[i], stats, now)]
    change = edit(view, active)
    if change is None and len(active) == len(valid):
        return None, False
    change = change or Change()
    profile, splices = view.profile, []
    keep = [i for i in active if i not in change.drop_rules]
    rules_m = view.member("profile", "rules")
    if rules_m is not None and keep != list(range(len(rules))):
        spans = jsonspan.array_elements(view.text, rules_m.value_start)
        kept = ",".join(view.text[spans[i][0] : spans[i][1]] for i in keep)
        splices.append(
            jsonspan.Splice(rules_m.value_start, rules_m.value_end, f"[{kept}]")
        )
        profile["rules"] = [rules[i] for i in keep]
    # pi rewrites the profile normalized: a protocol it cannot read goes too.
    if "protocol" in profile and (
        change.drop_protocol or not pi_profile.is_protocol(profile["protocol"])
    ):
        splices += _cut(view, ("profile",), "protocol")
        del profile["protocol"]
    if change.drop_teach_mode is not None:
        splices += _cut(view, ("profile", "teachStats"), change.drop_teach_mode)
        del profile["teachStats"][change.drop_teach_mode]
    at_m = view.member("at")
    if at_m is not None:
        view.value["at"] = isotime.iso(now)
        splices.append(jsonspan.replace_value(at_m, view.value["at"]))
    return splices, change != Change()


def _cut(view: EntryView, path: tuple[str, ...], key: str) -> list[jsonspan.Splice]:
    parent = view.member(*path)
    if parent is None:
        return []
    cut = jsonspan.cut_member(view.text, parent.value_start, key)
    return [cut] if cut else []


def _survives(
    path: Path, host_id: str, model: str, intended: dict[str, Any], recheck: float
) -> bool:
    """Our entry is still the file's, now and `recheck` seconds later."""

    def ours() -> bool:
        try:
            _, doc = _read_store(path)
        except StoreUnreadable:
            return False
        return bool(doc["hosts"].get(host_id, {}).get(model) == intended)

    if not ours():
        return False
    time.sleep(recheck)
    return ours()


def _read_store(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_bytes().decode("utf-8")
        doc = json.loads(text)
    except FileNotFoundError:
        raise StoreUnreadable(f"{path} does not exist") from None
    except (OSError, ValueError) as exc:
        raise StoreUnreadable(f"{path} is not readable JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("version") != 1:
        raise StoreUnreadable(f"{path} is not a version 1 adaptation store")
    if not isinstance(doc.get("hosts"), dict):
        raise StoreUnreadable(f"{path} has no `hosts` object")
    return text, doc


def _locate_entry(text: str, host_id: str, model: str) -> jsonspan.Member | None:
    start = len(text) - len(text.lstrip())
    found: jsonspan.Member | None = None
    for key in ("hosts", host_id, model):
        found = jsonspan.member(text, start, key)
        if found is None or text[found.value_start] != "{":
            return None
        start = found.value_start
    return found


def _verify(new_text: str, expected: dict[str, Any]) -> None:
    if json.loads(new_text) != expected:
        raise StoreUnreadable("edited store does not match the intended change")


def _write_atomic(path: Path, data: bytes, held: HeldLock) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4()}.tmp")
    mode = os.stat(path).st_mode & 0o777
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        held.check()
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
