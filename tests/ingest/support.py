"""Helpers for ingest tests: an enrolled agent speaking HTTP, fixture readers."""

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.test import Client

from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import Agent

BATCH = 1000


@dataclass
class AgentClient:
    """pi-dashboard-agent as the server sees it: a token and HTTP calls."""

    agent: Agent
    token: str
    client: Client

    @classmethod
    def enroll(cls, name: str = "test-agent") -> "AgentClient":
        agent, token = fleet_services.agent_issue(name=name, actor="test")
        return cls(agent, token, Client())

    def _headers(self, **extra: str) -> dict[str, str]:
        return {"HTTP_AUTHORIZATION": f"Bearer {self.token}", **extra}

    def heartbeat(
        self, fingerprint: dict[str, Any], hostname: str = "box", **reports: Any
    ) -> Any:
        """`reports`: the optional store / capabilities / ingest reports."""
        body = {
            "hostname": hostname,
            "host": fingerprint,
            "agent_version": "0.1.0",
            "pi_version": "0.96.0",
            "state_dir": "/home/u/.pi/agent/state",
            "lag": {
                "events_bytes_behind": 0,
                "corpus_bytes_behind": 0,
                "spool_batches": 0,
                "spool_bytes": 0,
                "oldest_unsent_at": None,
                "last_shipped_at": None,
            },
            **reports,
        }
        return self.client.post(
            "/api/v1/agent/heartbeat",
            json.dumps(body),
            content_type="application/json",
            **self._headers(),
        )

    def post(self, path: str, body: bytes, **headers: str) -> Any:
        content_type = headers.pop("content_type", "application/x-ndjson")
        return self.client.generic(
            "POST",
            f"/api/v1/ingest/{path}",
            body,
            content_type=content_type,
            **self._headers(**headers),
        )

    def snapshot(
        self, body: bytes, seq: int | str | None = None, epoch: str | None = None
    ) -> Any:
        order = {} if seq is None else {"HTTP_X_SNAPSHOT_SEQ": str(seq)}
        if epoch is not None:
            order["HTTP_X_SNAPSHOT_EPOCH"] = epoch
        return self.post("snapshot", body, content_type="application/json", **order)

    def lines(self, path: str, lines: list[bytes]) -> list[Any]:
        """POST lines in batches of 1,000; every response must be 200."""
        responses = []
        for start in range(0, len(lines), BATCH):
            body = b"\n".join(lines[start : start + BATCH]) + b"\n"
            response = self.post(path, body)
            assert response.status_code == 200, response.content[:500]
            responses.append(response.json())
        return responses


def fingerprint_of(host_dir: Path) -> dict[str, Any]:
    store = json.loads((host_dir / "model-adaptation.json").read_bytes())
    bucket = store["hosts"][host_dir.name]
    return dict(next(iter(bucket.values()))["host"])


def file_lines(path: Path) -> list[bytes]:
    return [line for line in path.read_bytes().split(b"\n") if line.strip()]


def stats_lines(host_dir: Path) -> list[bytes]:
    files = sorted((host_dir / "tool-recovery-stats").glob("*.json"))
    return [f.read_bytes().strip() for f in files]


def host_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.is_dir())


def _counts(text: str) -> dict[str, int]:
    return {
        k: int(v)
        for k, v in re.findall(r"([A-Za-z_][\w\-]*(?:\([^)]*\))?)=(\d+)", text)
    }


def readme_facts(root: Path, host_id: str) -> dict[str, Any]:
    """The counts the fixture README states for one host."""
    readme = (root / "README.md").read_text()
    section = readme.split(f"### {host_id}", 1)[1].split("\n### ", 1)[0]

    def line(prefix: str) -> str:
        match = re.search(rf"^\s*-\s*{re.escape(prefix)}(.*)$", section, re.M)
        assert match, prefix
        return match.group(1)

    events = line("tool-recovery-events.jsonl:")
    corpus = line("failure-corpus.jsonl:")
    by_state, _, by_phase = line("execution failures by state:").partition("by phase:")
    return {
        "events": int(events.split()[0]),
        "events_by_kind": _counts(events),
        "corpus": int(corpus.split()[0]),
        "corpus_by_kind": _counts(corpus),
        "stats_files": int(line("tool-recovery-stats/:").split()[0]),
        "validation": _counts(line("validation outcomes:").split("(")[0]),
        "states": _counts(by_state),
        "phases": _counts(by_phase),
        "codes": _counts(line("execution failure codes:")),
    }


def toolhealth_facts(text: str) -> dict[str, dict[str, Any]]:
    """What a store-only /toolhealth text shows, per model."""
    facts: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] = {}
    section = ""
    for raw in text.splitlines()[1:]:
        if not raw.startswith(" "):
            current = facts.setdefault(raw, {"rules": {}, "teach": {}})
        elif raw.startswith("  tool probe: "):
            current["probe"] = raw.removeprefix("  tool probe: ")
        elif raw.startswith("  protocol: "):
            current["protocol"] = raw.removeprefix("  protocol: ")
        elif raw.startswith("  variants tried: "):
            current["variants_tried"] = raw.removeprefix("  variants tried: ").split(
                ", "
            )
        elif raw.startswith("  rules"):
            section = "rules"
        elif raw.startswith("  teach stats"):
            section = "teach"
        elif raw.startswith("    - ") and section == "rules":
            m = re.match(r"    - (\S+) \((.+?)\): (.*)$", raw)
            assert m, raw
            current["rules"][m.group(1)] = {"age": m.group(2), "text": m.group(3)}
        elif raw.startswith("    - ") and section == "teach":
            m = re.match(r"    - (\S+): taught=(\d+) before=(\d+) after=(\d+)$", raw)
            assert m, raw
            current["teach"][m.group(1)] = tuple(int(g) for g in m.groups()[1:])
        elif raw.startswith("  probe diagnostic: "):
            current["diagnostic"] = raw.removeprefix("  probe diagnostic: ")
    return facts
