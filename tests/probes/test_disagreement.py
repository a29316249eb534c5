"""A host's verdict and a server-side verdict of the same model that differ are
flagged and explained on the model page and the host × model page (issue 13.10)."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from pi_dashboard.fleet.models import Host, HostModel, Model
from pi_dashboard.probes import services
from pi_dashboard.probes.models import ProbeRun, Trigger
from tests.probes.conftest import logged_in

pytestmark = pytest.mark.django_db

HOST = "amd-ryzen-9-7950x-16-core-processor-32c-64g"


def probed_endpoint(make_endpoint: Any, behaviour: str, **extra: Any) -> Any:
    endpoint = make_endpoint(behaviour, model_key="scripted/qwen", **extra)
    run = ProbeRun.objects.create(endpoint=endpoint, slot="s", trigger=Trigger.API)
    services.probe_run_execute(run_id=run.pk, final_attempt=True)
    endpoint.refresh_from_db()
    return endpoint


def host_verdict(
    status: str, grade: str, variant: str = "", days_ago: float = 0
) -> None:
    model, _ = Model.objects.get_or_create(
        key="scripted/qwen", defaults={"provider": "scripted", "model_id": "qwen"}
    )
    host, _ = Host.objects.get_or_create(pi_id=HOST)
    HostModel.objects.create(
        host=host,
        model=model,
        entry={},
        probe_status=status,
        probe_grade=grade,
        probe_variant=variant,
        probed_at=timezone.now() - timedelta(days=days_ago),
    )


def pages(viewer: Any) -> list[str]:
    client = logged_in(viewer)
    return [
        client.get("/models/scripted/qwen/").content.decode(),
        client.get(f"/hosts/{HOST}/models/scripted/qwen/").content.decode(),
    ]


def test_a_differing_verdict_is_flagged_and_explained(
    make_endpoint: Any, viewer: Any
) -> None:
    endpoint = probed_endpoint(make_endpoint, "text-tool-call", trials=2)
    assert endpoint.last_verdict == "text-protocol"
    host_verdict("native", "task", days_ago=3)
    for page in pages(viewer):
        assert "Host and server-side verdicts disagree" in page
        assert "the verdict, native grade differ" in page
        assert "They were probed 3 days apart; the server-side probe is newer." in page
        assert f"this endpoint calls {endpoint.base_url} as" in page
        assert "needs each trial to pass 2 times in a row" in page


def test_only_the_dialect_differing_is_explained_as_such(
    make_endpoint: Any, viewer: Any
) -> None:
    probed_endpoint(make_endpoint, "text-fenced-json")
    host_verdict("text-protocol", "absent", "tool-tag")
    for page in pages(viewer):
        assert "the text-protocol variant differs" in page
        assert "in different dialects" in page
        assert "probed 0 hours apart" not in page  # same day: no time reason


def test_agreeing_verdicts_say_nothing(make_endpoint: Any, viewer: Any) -> None:
    probed_endpoint(make_endpoint, "native-correct")
    host_verdict("native", "task")
    for page in pages(viewer):
        assert "verdicts disagree" not in page
