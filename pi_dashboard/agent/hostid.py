"""This machine's pi host fingerprint, computed exactly as pi does (reference §1.3).

pi keys its store by `<cpu slug>-<cores>c-<GiB>g`; the agent must produce the same id
or commands would edit a bucket pi never reads.
"""

import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

UNKNOWN_CPU = "unknown-cpu"
SLUG_MAX = 48
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class HostFingerprint:
    id: str
    cpu: str
    cores: int
    total_mem_gb: float

    def as_json(self) -> dict[str, Any]:
        """The fingerprint as pi writes it in an entry's `host`."""
        return {
            "id": self.id,
            "cpu": self.cpu,
            "cores": self.cores,
            "totalMemGb": self.total_mem_gb,
        }


def host_id(cpu: str, cores: int, total_mem_gb: float) -> str:
    """pi's id rule: slug the CPU name, cut to 48 chars *after* trimming dashes."""
    slug = _NON_ALNUM.sub("-", cpu.lower()).strip("-")[:SLUG_MAX]
    mem = int(total_mem_gb) if float(total_mem_gb).is_integer() else total_mem_gb
    return f"{slug}-{cores}c-{mem}g"


def round_half_up(value: float) -> int:
    # JavaScript's Math.round, not Python's banker's rounding.
    return math.floor(value + 0.5)


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """First logical CPU's model string, as Node's `os.cpus()[0].model` reports it."""
    try:
        text = cpuinfo.read_text(errors="replace")
    except OSError:
        text = ""
    for key in ("model name", "Processor", "cpu model"):
        for line in text.splitlines():
            name, sep, value = line.partition(":")
            if sep and name.strip() == key and value.strip():
                return value.strip()
    if sys.platform == "darwin":
        return _sysctl("machdep.cpu.brand_string") or UNKNOWN_CPU
    return UNKNOWN_CPU


def _sysctl(name: str) -> str:
    try:
        out = subprocess.run(
            ["/usr/sbin/sysctl", "-n", name],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    return out.stdout.strip()


def total_memory_bytes(meminfo: Path = Path("/proc/meminfo")) -> int:
    try:
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        return 0


def current_fingerprint() -> HostFingerprint:
    cpu = cpu_model() or UNKNOWN_CPU
    cores = max(1, os.cpu_count() or 1)
    mem_gb = round_half_up(total_memory_bytes() / 1024**3)
    return HostFingerprint(
        id=host_id(cpu, cores, mem_gb), cpu=cpu, cores=cores, total_mem_gb=mem_gb
    )


def fingerprint_from_override(override: dict[str, Any]) -> HostFingerprint:
    """A configured fingerprint (`host_override`), used to impersonate another host.

    Missing parts are filled from this machine; a given `id` wins over the derived one.
    """
    actual = current_fingerprint()
    cpu = str(override.get("cpu", actual.cpu))
    cores = int(override.get("cores", actual.cores))
    mem = override.get("totalMemGb", actual.total_mem_gb)
    return HostFingerprint(
        id=str(override.get("id") or host_id(cpu, cores, mem)),
        cpu=cpu,
        cores=cores,
        total_mem_gb=mem,
    )
