"""`pi-dashboard-agent status`: what the agent sees and what it still owes the server.

Reads only local files (config, pi's state dir, the agent's data dir), no network.
"""

import os
from pathlib import Path
from typing import Any

from pi_dashboard.agent import store_health
from pi_dashboard.agent.commands import AckOutbox
from pi_dashboard.agent.config import AgentConfig
from pi_dashboard.agent.quarantine import QUARANTINE_DIR, Quarantine
from pi_dashboard.agent.runner import fingerprint_for
from pi_dashboard.agent.shipper import ingest_counters
from pi_dashboard.agent.sources import (
    CORPUS_FILE,
    EVENTS_FILE,
    STATS_DIR,
    STORE_FILE,
    content_hash,
)
from pi_dashboard.agent.spool import spool_usage
from pi_dashboard.agent.state import AgentState
from pi_dashboard.agent.tailer import JsonlTailer, TailPosition


def status_collect(cfg: AgentConfig) -> dict[str, Any]:
    state = AgentState(cfg.data_dir)
    tails = state.get("tails", {})
    files: dict[str, Any] = {}
    for kind, name in (("events", EVENTS_FILE), ("corpus", CORPUS_FILE)):
        path = cfg.state_dir / name
        tailer = JsonlTailer(path, TailPosition.from_json(tails.get(kind)))
        files[name] = {
            "size": _size(path),
            "shipped_offset": tailer.position.offset,
            "inode": tailer.position.inode,
            "bytes_behind": tailer.bytes_behind(),
        }
    store = cfg.state_dir / STORE_FILE
    shipped = state.get("snapshot_hash", "")
    health = store_health.store_inspect(store)
    files[STORE_FILE] = {
        "size": _size(store),
        "status": health["status"],
        # The server refuses a store pi cannot read: it was sent, never shipped.
        "shipped": health["status"] == "ok"
        and bool(shipped)
        and content_hash(store.read_bytes()) == shipped,
    }
    stats_dir = cfg.state_dir / STATS_DIR
    stats_files = sorted(stats_dir.glob("*.json")) if stats_dir.is_dir() else []
    files[STATS_DIR] = {
        "files": len(stats_files),
        "shipped": len(state.get("stats", {})),
    }
    batches, spooled = spool_usage(cfg.data_dir / "spool")
    host = fingerprint_for(cfg).id
    quarantine = Quarantine(cfg.data_dir / QUARANTINE_DIR)
    held = quarantine.entries()
    return {
        "config": str(cfg.path),
        "server": cfg.server,
        "host": host,
        "store": health,
        "store_problem": store_health.store_problem(health, host),
        "capabilities": store_health.capabilities(cfg.pi_command, cfg.agent_dir),
        "host_override": bool(cfg.host_override),
        "pi_command": cfg.pi_command,
        "state_dir": str(cfg.state_dir),
        "state_dir_found": cfg.state_dir.is_dir(),
        "data_dir": str(cfg.data_dir),
        "files": files,
        "spool": {"batches": batches, "bytes": spooled},
        "quarantine": {
            "path": str(quarantine.path),
            "lines": len(held),
            "last": {k: held[-1].get(k) for k in ("at", "kind", "reason")}
            if held
            else None,
        },
        "ingest": ingest_counters(state),
        "unsent_acks": len(AckOutbox(cfg.data_dir).unsent()),
        "counters": state.get("counters", {}),
        **state.contact.as_json(),
    }


def _size(path: Path) -> int | None:
    try:
        return os.stat(path).st_size
    except FileNotFoundError:
        return None


def _store_line(store: dict[str, Any]) -> str:
    if store["status"] != "ok":
        return f"{store['status'].upper()}: {store['reason']}"
    return f"ok; host ids in it: {', '.join(store['host_ids']) or 'none'}"


def status_format(s: dict[str, Any]) -> str:
    found = "found" if s["state_dir_found"] else "MISSING"
    lines = [
        f"config:      {s['config']}",
        f"server:      {s['server']}",
        f"host id:     {s['host']}{' (host_override)' if s['host_override'] else ''}",
        f"pi state:    {s['state_dir']} ({found})",
        f"data dir:    {s['data_dir']}",
        f"rpc:         {s['pi_command'] or 'off (edits the store file directly)'}",
        f"store:       {_store_line(s['store'])}",
    ]
    if s["store_problem"]:
        lines.append(f"PROBLEM:     {s['store_problem']}")
    for name, info in s["files"].items():
        lines.append(f"  {name}: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    spool = s["spool"]
    lines += [
        f"spool:       {spool['batches']} batch(es), {spool['bytes']} bytes",
        f"quarantine:  {s['quarantine']['lines']} line(s) in {s['quarantine']['path']}",
        f"unsent acks: {s['unsent_acks']}",
        f"last contact: {s['last_contact_at'] or 'never'}",
        f"last shipped: {s['last_shipped_at'] or 'never'}",
    ]
    if s["last_error"]:
        lines.append(f"last error:  {s['last_error']} (at {s['last_error_at']})")
    last = s["quarantine"]["last"]
    if last:
        lines.append(
            f"  last quarantined: {last['kind']} at {last['at']}: {last['reason']}"
        )
    if s["ingest"]["last_problem"]:
        ingest = s["ingest"]
        lines.append(
            f"ingest problem: {ingest['last_problem']} (at {ingest['last_problem_at']})"
        )
    if s["counters"]:
        counters = ", ".join(f"{k}={v}" for k, v in sorted(s["counters"].items()))
        lines.append(f"counters:    {counters}")
    return "\n".join(lines)
