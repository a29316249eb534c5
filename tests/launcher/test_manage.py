"""`make manage ARGS=...` (issue 12 item 4): manage.py with `make run`'s settings.

A user's shell has none of the variables `make run` sets; `manage.py` alone refuses
to start there, the launcher's `manage` works.
"""

import os
import subprocess
import sys

import pytest

from tests.support.launching import MARKS, throwaway_database
from tests.support.processes import ROOT

pytestmark = MARKS

MAKE_RUN_VARIABLES = ("DJANGO_SECRET_KEY", "PI_DASHBOARD_DEV", "DJANGO_DEBUG")


def users_shell(database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in MAKE_RUN_VARIABLES}
    env.pop("DJANGO_TEST_DB_NAME", None)
    env["DATABASE_URL"] = database_url
    return env


def launcher_manage(
    env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pi_dashboard.launcher", "manage", "--", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.timeout(180)
def test_manage_issues_an_agent_token_where_manage_py_alone_cannot() -> None:
    with throwaway_database() as url:
        env = users_shell(url)
        bare = subprocess.run(
            [sys.executable, "manage.py", "agent_token", "list"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert bare.returncode != 0
        assert "DJANGO_SECRET_KEY must be set" in bare.stderr
        assert launcher_manage(env, "migrate", "--noinput").returncode == 0
        issued = launcher_manage(env, "agent_token", "issue", "build-07")
        assert issued.returncode == 0, issued.stderr
        assert "pid_ag_" in issued.stdout
        listed = launcher_manage(env, "agent_token", "list")
        assert "build-07" in listed.stdout
