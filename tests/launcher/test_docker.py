"""docker/: what can be checked without a Docker engine."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((DOCKER / "compose.yaml").read_text())


def test_compose_has_the_five_services_with_healthchecks(compose: dict) -> None:
    services = compose["services"]
    assert set(services) == {"postgres", "redis", "web", "worker", "beat"}
    assert services["postgres"]["image"].startswith("postgres:17")
    assert services["redis"]["image"].startswith("redis:7")
    for name, service in services.items():
        assert service.get("healthcheck", {}).get("test"), name


def test_app_services_build_the_image_and_wait_for_their_dependencies(
    compose: dict,
) -> None:
    for name, command in (("web", "web"), ("worker", "worker"), ("beat", "beat")):
        service = compose["services"][name]
        assert service["command"] == [command]
        build = service["build"]
        context = (DOCKER / build["context"]).resolve()
        assert context == ROOT
        assert (context / build["dockerfile"]).is_file()
        deps = service["depends_on"]
        assert deps["postgres"]["condition"] == "service_healthy"
        assert deps["redis"]["condition"] == "service_healthy"
        env = service["environment"]
        assert env["DATABASE_URL"].startswith("postgresql://")
        assert env["REDIS_URL"].startswith("redis://")
    # Workers start only after web has migrated the database.
    for name in ("worker", "beat"):
        depends = compose["services"][name]["depends_on"]
        assert depends["web"]["condition"] == "service_healthy"


def test_dockerfile_copies_what_it_runs() -> None:
    dockerfile = (DOCKER / "Dockerfile").read_text()
    assert dockerfile.startswith("#") or "FROM python:3.12-slim" in dockerfile
    assert re.search(r"^FROM python:3\.12-slim$", dockerfile, flags=re.M)
    for source in re.findall(r"^COPY (\S+) ", dockerfile, flags=re.M):
        assert (ROOT / source).exists(), source
    entry = re.search(r'^ENTRYPOINT \["([^"]+)"\]', dockerfile, flags=re.M)
    assert entry is not None
    assert re.search(
        rf"^COPY docker/entrypoint.sh \S*/{entry.group(1)}$", dockerfile, re.M
    )
    assert re.search(r"^USER app$", dockerfile, flags=re.M)  # never root at run time
    assert "collectstatic" in dockerfile
    assert "pip install ." in dockerfile


def test_entrypoint_is_valid_sh_with_web_worker_beat() -> None:
    script = DOCKER / "entrypoint.sh"
    assert script.stat().st_mode & 0o111
    subprocess.run(["sh", "-n", str(script)], check=True)
    text = script.read_text()
    for mode in ("web)", "worker)", "beat)", "migrate --noinput", "gunicorn"):
        assert mode in text


@pytest.mark.skipif(
    shutil.which("docker") is None
    or subprocess.run(["docker", "compose", "version"], capture_output=True).returncode,
    reason="docker compose is not installed",
)
def test_docker_compose_accepts_the_file(tmp_path: Path) -> None:
    env = tmp_path / ".env"
    env.write_text("POSTGRES_PASSWORD=x\nDJANGO_SECRET_KEY=x\n")
    subprocess.run(
        [
            "docker",
            "compose",
            "-f",
            str(DOCKER / "compose.yaml"),
            "--env-file",
            str(env),
            "config",
            "--quiet",
        ],
        check=True,
    )
