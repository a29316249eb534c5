"""How pi would read this host's `model-adaptation.json`: ok, missing or unreadable.

pi treats a store it cannot read (invalid JSON, `version` other than 1, no `hosts`
object) as empty, and its next write replaces it with only its own host: every other
host's data is lost. And pi reads only the bucket of this machine's id, so a store
whose buckets are all keyed by other ids (a copied store, a RAM or vCPU change) shows
nothing. Both are reported in `status` and in the heartbeat's `store` (CONTRACT.md).
"""

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

REASON_MAX = 500
HOST_IDS_MAX = 100
HOST_ID_MAX_LEN = 200


def store_inspect(path: Path) -> dict[str, Any]:
    """`{"status", "reason", "host_ids"}`: the store at `path` as pi would read it."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return _report(
            "missing", f"{path.name} does not exist (pi has not written it yet)"
        )
    except OSError as exc:
        return _report("unreadable", f"cannot read {path.name}: {exc.strerror or exc}")
    try:
        # pi reads the file as UTF-8 with replacement, then JSON.parse.
        doc = json.loads(raw.decode("utf-8", errors="replace"))
    except json.JSONDecodeError as exc:
        where = f"at line {exc.lineno}, column {exc.colno}"
        return _report("unreadable", f"invalid JSON {where}: {exc.msg}")
    if not isinstance(doc, dict):
        return _report("unreadable", "not a JSON object; pi reads it as empty")
    if doc.get("version") != 1:
        version = json.dumps(doc.get("version")) if "version" in doc else "missing"
        return _report("unreadable", f"version is {version}, pi reads only 1")
    hosts = doc.get("hosts")
    if not isinstance(hosts, dict):
        return _report("unreadable", "`hosts` is not an object; pi reads it as empty")
    ids = [h for h in hosts if 0 < len(h) <= HOST_ID_MAX_LEN][:HOST_IDS_MAX]
    return {"status": "ok", "reason": "", "host_ids": ids}


def _report(status: str, reason: str) -> dict[str, Any]:
    return {"status": status, "reason": reason[:REASON_MAX], "host_ids": []}


def store_problem(report: dict[str, Any], host_id: str) -> str | None:
    """One sentence for a person when pi on this machine will not see the store's
    data, else None."""
    if report["status"] == "unreadable":
        return (
            f"pi cannot read its store ({report['reason']}); pi treats it as empty and "
            "its next write keeps only this host's data"
        )
    if report["status"] == "ok" and host_id not in report["host_ids"]:
        found = ", ".join(report["host_ids"]) or "none"
        return (
            f"this machine's id {host_id} is not among the store's host ids ({found}): "
            "pi on this machine reads none of that data"
        )
    return None


MODELS_FILE = "models.json"
MODELS_MAX = 500
MODEL_KEY_MAX_LEN = 600


def models_known(agent_dir: Path) -> list[str]:
    """`provider/modelId` of each model pi's models.json (in pi's agentDir) names:
    pi probes any of these, stored or not. Empty when the file is absent or not
    readable JSON (pi also knows its built-in models, which are not listed)."""
    try:
        document = json.loads((agent_dir / MODELS_FILE).read_bytes())
    except (OSError, ValueError):
        return []
    providers = document.get("providers") if isinstance(document, dict) else None
    keys: list[str] = []
    for provider, spec in (providers if isinstance(providers, dict) else {}).items():
        models = spec.get("models") if isinstance(spec, dict) else None
        for model in models if isinstance(models, list) else []:
            model_id = model.get("id") if isinstance(model, dict) else None
            key = f"{provider}/{model_id}"
            if isinstance(model_id, str) and model_id and len(key) <= MODEL_KEY_MAX_LEN:
                keys.append(key)
    return list(dict.fromkeys(keys))[:MODELS_MAX]


def capabilities(
    pi_command: str | None, agent_dir: Path | None = None
) -> dict[str, Any]:
    """The heartbeat's `capabilities`: what this agent can do on this host, and
    (given pi's agentDir) the models its models.json adds, for a probe."""
    report = _abilities(pi_command)
    models = models_known(agent_dir) if agent_dir is not None else []
    return {**report, "models": models} if models else report


def _abilities(pi_command: str | None) -> dict[str, Any]:
    if not pi_command:
        why = (
            "no pi_command in the agent config: commands edit pi's store file and "
            "probes cannot run (enroll with --pi-command pi)"
        )
        return {"probe": False, "rpc": False, "why": why}
    try:
        program = shlex.split(pi_command)[0]
    except (ValueError, IndexError):
        return {
            "probe": False,
            "rpc": True,
            "why": f"pi_command {pi_command!r} cannot be parsed",
        }
    if shutil.which(program) is None:
        why = f"pi_command's program {program!r} is not found on this host"
        return {"probe": False, "rpc": True, "why": why}
    return {"probe": True, "rpc": True, "why": ""}
