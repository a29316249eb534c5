"""Edit pi's `model-adaptation.json` the way pi does, touching one entry only.

Under pi's lock: read, change only `hosts[<own host>][<model>]` (and that entry's `at`,
as every pi mutation does), write `<file>.<pid>.<uuid>.tmp`, rename, release. The edit
is spliced into the text (see `jsonspan`), so every other host, model and field keeps
its exact bytes; the result is re-parsed and compared with the intended document
before it replaces the file.
"""

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pi_dashboard.agent import isotime, jsonspan
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


# An edit returns the splices for the entry's text and mutates the parsed entry the
# same way (for the verification), or returns None when there is nothing to change.
Edit = Callable[[EntryView], list[jsonspan.Splice] | None]


def remove_rule(mode: str) -> Edit:
    def edit(view: EntryView) -> list[jsonspan.Splice] | None:
        rules_m = view.member("profile", "rules")
        rules = view.value.get("profile", {}).get("rules")
        if rules_m is None or not isinstance(rules, list):
            return None
        spans = jsonspan.array_elements(view.text, rules_m.value_start)
        keep = [i for i, r in enumerate(rules) if not _mode_is(r, mode)]
        if len(keep) == len(rules):
            return None
        view.value["profile"]["rules"] = [rules[i] for i in keep]
        kept = ",".join(view.text[spans[i][0] : spans[i][1]] for i in keep)
        return [jsonspan.Splice(rules_m.value_start, rules_m.value_end, f"[{kept}]")]

    return edit


def _mode_is(rule: Any, mode: str) -> bool:
    return isinstance(rule, dict) and rule.get("mode") == mode


def reset_protocol() -> Edit:
    def edit(view: EntryView) -> list[jsonspan.Splice] | None:
        profile_m = view.member("profile")
        if profile_m is None or "protocol" not in view.value.get("profile", {}):
            return None
        del view.value["profile"]["protocol"]
        cut = jsonspan.cut_member(view.text, profile_m.value_start, "protocol")
        return [cut] if cut else None

    return edit


def forget_mode(mode: str) -> Edit:
    def edit(view: EntryView) -> list[jsonspan.Splice] | None:
        stats_m = view.member("profile", "teachStats")
        stats = view.value.get("profile", {}).get("teachStats")
        if stats_m is None or not isinstance(stats, dict) or mode not in stats:
            return None
        del stats[mode]
        cut = jsonspan.cut_member(view.text, stats_m.value_start, mode)
        return [cut] if cut else None

    return edit


def store_edit_entry(
    *,
    path: Path,
    host_id: str,
    model: str,
    edit: Edit,
    stale: float = 10.0,
    wait: float = 15.0,
) -> bool:
    """Apply `edit` to one entry under pi's lock; True if the file was changed."""
    with locked(path, stale=stale, wait=wait) as held:
        text, doc = _read_store(path)
        entry_m = _locate_entry(text, host_id, model)
        entry = doc["hosts"].get(host_id, {}).get(model)
        if entry_m is None or not isinstance(entry, dict):
            return False
        view = EntryView(text, entry_m.value_start, entry)
        splices = edit(view)
        if not splices:
            return False
        at_m = view.member("at")
        if at_m is not None:
            entry["at"] = isotime.utc_now_iso()
            splices.append(jsonspan.replace_value(at_m, entry["at"]))
        new_text = jsonspan.apply_splices(text, splices)
        _verify(new_text, doc)
        _write_atomic(path, new_text.encode("utf-8"), held)
        return True


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
