"""The WSGI entry point gunicorn loads."""

import subprocess
import sys

from tests.support.processes import ROOT, child_env


def test_loaded_code_is_frozen_out_of_the_collector() -> None:
    probe = (
        "import gc, sys, pi_dashboard.wsgi as w; "
        "print(callable(w.application), gc.get_freeze_count(), "
        "'pi_dashboard.ingest.api' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        env=child_env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    assert out[0] == "True"
    assert int(out[1]) > 50_000  # Django, the views, ninja's routers and schemas
    assert out[2] == "True"  # the URLconf's views were loaded before freezing
