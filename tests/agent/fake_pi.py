#!/usr/bin/env python3
"""A stand-in for the Node `pi` binary in RPC mode, for tests only.

It speaks the JSON-lines protocol of docs/pi-host-data.md §6.1/§6.2 (commands on stdin,
responses and interleaved events on stdout, matched by `id`) and edits the store the
way pi does: mkdir lock, read, change its own host's entry, JSON.stringify the whole
document, write a temp file, rename. It is NOT pi: no models, no probing; `tool_probe`
answers a canned verdict. Its host id comes from FAKE_PI_HOST_ID.

Knobs (environment): FAKE_PI_CRASH=1 exits before answering; FAKE_PI_FAIL=<message>
answers every command with success:false.
"""

import json
import os
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path


def now_iso() -> str:
    n = datetime.now(UTC)
    return n.strftime("%Y-%m-%dT%H:%M:%S.") + f"{n.microsecond // 1000:03d}Z"


def store_path() -> Path:
    return (
        Path(os.environ["PI_ADAPTATIVE_CODING_AGENT_DIR"])
        / "state"
        / ("model-adaptation.json")
    )


def mutate(model: str, change) -> bool:  # type: ignore[no-untyped-def]
    path = store_path()
    lock = Path(str(path) + ".lock")
    while True:
        try:
            os.mkdir(lock)
            break
        except FileExistsError:
            time.sleep(0.05)
    try:
        doc = json.loads(path.read_text())
        entry = doc["hosts"].get(os.environ["FAKE_PI_HOST_ID"], {}).get(model)
        if entry is None or not change(entry["profile"]):
            return False
        entry["at"] = now_iso()
        tmp = path.with_name(f"{path.name}.{os.getpid()}.{uuid.uuid4()}.tmp")
        tmp.write_text(
            json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n"
        )
        os.replace(tmp, path)
        return True
    finally:
        os.rmdir(lock)


def remove_rule(mode: str):  # type: ignore[no-untyped-def]
    def change(profile: dict) -> bool:  # type: ignore[type-arg]
        before = len(profile["rules"])
        profile["rules"] = [r for r in profile["rules"] if r["mode"] != mode]
        return len(profile["rules"]) != before

    return change


def reset_protocol(profile: dict) -> bool:  # type: ignore[type-arg]
    return profile.pop("protocol", None) is not None


def handle(cmd: dict) -> dict:  # type: ignore[type-arg]
    kind = cmd["type"]
    if kind == "remove_tool_repair_rule":
        return {"removed": mutate(cmd["model"], remove_rule(cmd["mode"]))}
    if kind == "reset_tool_protocol":
        return {"removed": mutate(cmd["model"], reset_protocol)}
    if kind == "tool_probe":
        result = {"model": cmd["model"], "verdict": "native", "nativeGrade": "task"}
        probe = {"version": 1, "status": "native", "probedAt": now_iso()}
        probe["nativeGrade"] = "task"
        mutate(cmd["model"], lambda p: p.update(toolProbe=probe) or True)
        return {"results": [result], "table": "Tool probe results:"}
    raise ValueError(f"Invalid {kind} command payload.")


def emit(obj: dict) -> None:  # type: ignore[type-arg]
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    if "--version" in sys.argv:
        print("0.96.0-fake")
        return 0
    if sys.argv[1:3] != ["--mode", "rpc"]:
        print("fake pi only speaks --mode rpc", file=sys.stderr)
        return 2
    for line in sys.stdin:
        cmd = json.loads(line)
        if os.environ.get("FAKE_PI_CRASH"):
            print("fake pi: crashing on purpose", file=sys.stderr)
            return 1
        # Events and other requests' responses come first: the agent must skip them.
        emit({"type": "agent_start"})
        emit(
            {"id": "someone-else", "type": "response", "command": "x", "success": True}
        )
        sys.stdout.write("not json at all\n")
        base = {"id": cmd.get("id"), "type": "response", "command": cmd["type"]}
        if os.environ.get("FAKE_PI_FAIL"):
            emit({**base, "success": False, "error": os.environ["FAKE_PI_FAIL"]})
            continue
        try:
            emit({**base, "success": True, "data": handle(cmd)})
        except (KeyError, ValueError) as exc:
            emit({**base, "success": False, "error": str(exc)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
