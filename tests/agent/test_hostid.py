"""pi's host id rule (docs/pi-host-data.md §1.3) and how the agent finds this machine's
values."""

from pathlib import Path

import pytest

from pi_dashboard.agent import hostid


@pytest.mark.parametrize(
    ("cpu", "cores", "mem", "expected"),
    [
        # The reference's examples, verified there against pi's own code.
        (
            "AMD Ryzen 9 7950X 16-Core Processor",
            32,
            64,
            "amd-ryzen-9-7950x-16-core-processor-32c-64g",
        ),
        ("Apple M2 Pro", 12, 32, "apple-m2-pro-12c-32g"),
        (
            "13th Gen Intel(R) Core(TM) i9-13900K",
            32,
            64,
            "13th-gen-intel-r-core-tm-i9-13900k-32c-64g",
        ),
        # The fixture hosts (ids written by pi itself).
        ("Apple M3 Max", 16, 128, "apple-m3-max-16c-128g"),
        (
            "Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz",
            128,
            512,
            "intel-r-xeon-r-gold-6338-cpu-2-00ghz-128c-512g",
        ),
        ("unknown-cpu", 1, 0, "unknown-cpu-1c-0g"),
    ],
)
def test_host_id_matches_pi(cpu: str, cores: int, mem: int, expected: str) -> None:
    assert hostid.host_id(cpu, cores, mem) == expected


def test_cut_to_48_happens_after_trimming_and_may_end_in_a_dash() -> None:
    # 47 letters, then a separator run: the 48-char prefix ends in "-".
    cpu = "  --" + "a" * 47 + " (x) more text"
    slug = "a" * 47 + "-"
    assert hostid.host_id(cpu, 8, 16) == f"{slug}-8c-16g"


def test_memory_rounds_half_up_like_javascript() -> None:
    assert hostid.round_half_up(62.5) == 63  # Python's round() would give 62
    assert hostid.round_half_up(15.49) == 15


def test_cpu_model_is_the_first_model_name(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text(
        "processor\t: 0\nmodel name\t: AMD Ryzen 9 7950X 16-Core Processor  \n\n"
        "processor\t: 1\nmodel name\t: Something Else\n"
    )
    assert hostid.cpu_model(info) == "AMD Ryzen 9 7950X 16-Core Processor"


def test_memory_from_meminfo(tmp_path: Path) -> None:
    info = tmp_path / "meminfo"
    info.write_text("MemTotal:       65536000 kB\nMemFree: 1 kB\n")
    assert hostid.total_memory_bytes(info) == 65536000 * 1024


def test_current_fingerprint_is_consistent() -> None:
    fp = hostid.current_fingerprint()
    assert fp.cores >= 1
    assert fp.id == hostid.host_id(fp.cpu, fp.cores, fp.total_mem_gb)
    assert fp.as_json() == {
        "id": fp.id,
        "cpu": fp.cpu,
        "cores": fp.cores,
        "totalMemGb": fp.total_mem_gb,
    }


def test_override_impersonates_a_fixture_host() -> None:
    fp = hostid.fingerprint_from_override(
        {"cpu": "Apple M3 Max", "cores": 16, "totalMemGb": 128}
    )
    assert fp.id == "apple-m3-max-16c-128g"
    assert hostid.fingerprint_from_override({"id": "x-1c-1g"}).id == "x-1c-1g"
