"""Fleet pages through the real client: full pages and htmx partials, roles, queries.

State is seeded from the shared pi fixture store (real entries written by pi) with the
ORM; rollups and events are made relative to now so that the time ranges see them.
"""

import hashlib
import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from pi_dashboard.fleet.models import Agent, Host, HostModel, Model
from pi_dashboard.ingest import store
from pi_dashboard.ingest.models import Dimension, EventRecord

AMD = "amd-ryzen-9-7950x-16-core-processor-32c-64g"
XEON = "intel-r-xeon-r-gold-6338-cpu-2-00ghz-128c-512g"


def derived(entry: dict[str, Any]) -> dict[str, Any]:
    profile = entry.get("profile") or {}
    probe = profile.get("toolProbe") or {}
    protocol = profile.get("protocol") or {}
    return {
        "probe_status": probe.get("status", ""),
        "probe_grade": probe.get("nativeGrade", ""),
        "probe_variant": probe.get("variant", ""),
        "probed_at": probe.get("probedAt"),
        "protocol_status": (protocol.get("status") or "calibrated") if protocol else "",
        "protocol_variant": protocol.get("variant", ""),
        "rule_count": len(profile.get("rules") or []),
        "entry_at": entry.get("at"),
    }


def seed_store(store: dict[str, Any]) -> list[HostModel]:
    """Hosts, models and current state as snapshot ingest derives them."""
    made = []
    now = timezone.now()
    for host_id, entries in store["hosts"].items():
        host = Host.objects.create(pi_id=host_id, last_contact_at=now)
        for key, entry in entries.items():
            provider, model_id = key.split("/", 1)
            model, _ = Model.objects.get_or_create(
                key=key, defaults={"provider": provider, "model_id": model_id}
            )
            made.append(
                HostModel.objects.create(
                    host=host, model=model, entry=entry, **derived(entry)
                )
            )
    return made


def add_rollups(hm: HostModel, counts: dict[tuple[str, str], int], hours_ago: int = 1):
    """Counts in the hour `hours_ago`, hourly and daily, as ingest writes them."""
    bucket = (timezone.now() - timedelta(hours=hours_ago)).replace(
        minute=0, second=0, microsecond=0
    )
    store.rollups_add(
        hm.host_id,
        {(bucket, hm.model_id, dim, key): n for (dim, key), n in counts.items()},
    )


def add_event(hm: HostModel, i: int, **fields: Any) -> EventRecord:
    payload = {"recordId": f"s:{i}", "tool": fields.get("tool", "bash"), **fields}
    defaults = {
        "kind": "tool_execution_failure",
        "outcome": "failed",
        "tool": "bash",
        "phase": "execution",
        "failure_code": "file_not_found",
    }
    defaults.update(fields)
    return EventRecord.objects.create(
        host=hm.host,
        model=hm.model,
        content_hash=hashlib.sha256(f"{hm.pk}:{i}".encode()).digest(),
        ts=timezone.now() - timedelta(minutes=i),
        session_id="s",
        record_id=f"s:{i}",
        payload=payload,
        **defaults,
    )


@pytest.fixture
def fleet(db: None, pi_fixtures: Path) -> dict[str, HostModel]:
    return seed_fleet(pi_fixtures)


def seed_fleet(pi_fixtures: Path) -> dict[str, HostModel]:
    """The fixture store's three hosts, plus one agent (with a hostname) on AMD."""
    store = json.loads((pi_fixtures / "model-adaptation.json").read_text())
    made = seed_store(store)
    Agent.objects.create(
        name="amd-agent",
        token_prefix="pid_ag_x",
        token_hash="0" * 64,
        host=Host.objects.get(pi_id=AMD),
        hostname="maria-workstation",
        agent_version="0.1.0",
        pi_version="0.96.0",
        lag={"events_bytes_behind": 2048, "spool_batches": 1, "spool_bytes": 4096},
        # Its agent runs pi's RPC: "Probe now…" is offered (front.pages.probe_offer).
        capabilities={"probe": True, "rpc": True, "why": ""},
    )
    return {f"{hm.host.pi_id}|{hm.model.key}": hm for hm in made}


def login(client: Client, user: Any) -> Client:
    client.force_login(user)
    return client


# ---- fleet overview ----------------------------------------------------------------


def test_overview_empty_fleet_says_how_to_enroll(client, viewer):
    body = login(client, viewer).get("/").content.decode()
    assert "No hosts have reported yet" in body
    assert 'make manage ARGS="agent_token issue build-box-1"' in body
    assert "pi-dashboard-agent enroll" in body
    assert "probe endpoint" in body


def test_overview_matrix_shows_every_host_and_model(client, viewer, fleet):
    hm = fleet[f"{AMD}|openai/gpt-5.1"]
    add_rollups(
        hm,
        {
            (Dimension.OUTCOME, "execution:failed"): 30,
            (Dimension.OUTCOME, "validation:bounced"): 18,
            (Dimension.OUTCOME, "validation:repaired"): 99,
        },
    )
    response = login(client, viewer).get("/")
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" in body
    for key in {k.split("|")[1] for k in fleet}:
        assert key in body
    for host in {k.split("|")[0] for k in fleet}:
        assert host in body
    # (30 + 18) failures over 24 h = 2/h; repaired calls are not failures.
    assert "2/h" in body
    assert "maria-workstation" in body
    assert 'class="badge badge-native"' in body
    assert 'class="badge badge-text-protocol"' in body


def test_overview_htmx_returns_only_the_matrix(client, viewer, fleet):
    response = login(client, viewer).get("/?view=list", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in body
    assert body.lstrip().startswith('<section id="fleet-matrix"')
    assert 'hx-trigger="every 30s"' in body
    assert "openai/gpt-5.1" in body


@pytest.mark.parametrize(
    ("query", "present", "absent"),
    [
        ("provider=llamacpp", "llamacpp/glm-4.6", "openai/gpt-5.1"),
        (f"host={XEON}", XEON, AMD),
        ("q=maria", AMD, XEON),
        ("q=deepseek", "openrouter/deepseek/deepseek-v3.2", "openai/gpt-5.1"),
        ("verdict=text-protocol", "llamacpp/glm-4.6", "anthropic/claude-sonnet-4-5"),
    ],
)
def test_overview_filters(client, viewer, fleet, query, present, absent):
    body = login(client, viewer).get(f"/?view=list&{query}").content.decode()
    matrix = body[body.index('id="fleet-matrix"') :]
    assert present in matrix
    assert absent not in matrix


def test_overview_sorts_by_failures(client, viewer, fleet):
    add_rollups(
        fleet[f"{XEON}|llamacpp/glm-4.6"],
        {(Dimension.OUTCOME, "execution:failed"): 5},
    )
    body = login(client, viewer).get("/?sort=-failures").content.decode()
    matrix = body[body.index('id="fleet-matrix"') :]
    assert matrix.index(XEON) < matrix.index(AMD)
    body = login(client, viewer).get("/?sort=host").content.decode()
    matrix = body[body.index('id="fleet-matrix"') :]
    assert matrix.index(AMD) < matrix.index(XEON)


def test_overview_bad_filters_are_reported_not_500(client, viewer, fleet):
    response = login(client, viewer).get("/?verdict=maybe&sort=sideways&range=1y")
    assert response.status_code == 200
    assert "were not understood" in response.content.decode()


def test_overview_query_count_is_constant(
    client, viewer, fleet, django_assert_max_num_queries
):
    login(client, viewer)
    # 9 for the matrix, 4 for the alerts' attention header and liveness grace.
    with django_assert_max_num_queries(13):
        client.get("/")
    # Twenty more hosts with two models each: the same number of queries.
    extra = Model.objects.create(key="p/extra", provider="p", model_id="extra")
    for i in range(20):
        host = Host.objects.create(pi_id=f"bulk-host-{i}")
        HostModel.objects.create(host=host, model=extra, rule_count=1)
        HostModel.objects.create(
            host=host, model=Model.objects.get(key="openai/gpt-5.1")
        )
        add_rollups(
            HostModel.objects.get(host=host, model=extra),
            {(Dimension.OUTCOME, "execution:failed"): i},
        )
    with django_assert_max_num_queries(13):
        body = client.get("/").content.decode()
    assert "bulk-host-19" in body


# ---- model, host, host × model -----------------------------------------------------


def test_model_page_lists_hosts_rules_and_charts(client, viewer, fleet):
    hm = fleet[f"{AMD}|anthropic/claude-sonnet-4-5"]
    add_rollups(
        hm,
        {
            (Dimension.REPAIR_MODE, "nullOptionalDrop"): 7,
            (Dimension.PHASE, "execution"): 3,
            (Dimension.FAILURE_CODE, "file_not_found"): 3,
        },
    )
    response = login(client, viewer).get("/models/anthropic/claude-sonnet-4-5/")
    body = response.content.decode()
    assert response.status_code == 200
    assert AMD in body
    assert "apple-m3-max-16c-128g" in body
    assert "nullOptionalDrop" in body
    assert "Repair modes applied" in body
    assert "Execution failures by phase" in body
    assert "Execution failures by failure code" in body
    data = json.loads(
        body.split('id="chart-repair-modes" type="application/json">')[1].split(
            "</script>"
        )[0]
    )
    assert data["series"][0]["label"] == "nullOptionalDrop"
    assert data["series"][0]["total"] == 7
    assert "vendor/uplot/uPlot.iife.min.js" in body


def test_model_key_with_slashes_resolves(client, viewer, fleet):
    response = login(client, viewer).get("/models/openrouter/deepseek/deepseek-v3.2/")
    assert response.status_code == 200
    assert "singleObjectWrap" in response.content.decode()


# 13, plus 3 for the charts fitted to their data (where it starts, and the two
# marker sources: pi's changes and operators' commands; issue 12 item 13).
MODEL_PAGE_QUERIES = 16


def test_model_page_query_count_is_constant(
    client, viewer, fleet, django_assert_max_num_queries
):
    login(client, viewer)
    url = "/models/openai/gpt-5.1/"
    with django_assert_max_num_queries(MODEL_PAGE_QUERIES):
        client.get(url)
    model = Model.objects.get(key="openai/gpt-5.1")
    entry = fleet[f"{AMD}|openai/gpt-5.1"].entry
    for i in range(15):
        host = Host.objects.create(pi_id=f"bulk-{i}")
        HostModel.objects.create(host=host, model=model, entry=entry, rule_count=3)
        Agent.objects.create(
            name=f"a{i}", token_prefix="x", token_hash=f"{i + 1:064d}", host=host
        )
    with django_assert_max_num_queries(MODEL_PAGE_QUERIES):
        body = client.get(url).content.decode()
    assert "bulk-14" in body


def test_unknown_model_and_host_are_404(client, viewer, fleet):
    login(client, viewer)
    assert client.get("/models/nope/nothing/").status_code == 404
    assert client.get("/hosts/nope/").status_code == 404
    assert client.get(f"/hosts/{AMD}/models/nope/x/").status_code == 404


def test_host_page_shows_agents_models_and_lag(client, viewer, fleet):
    body = login(client, viewer).get(f"/hosts/{AMD}/").content.decode()
    assert "maria-workstation" in body
    assert "pi 0.96.0" in body
    assert "2.0 KiB behind" in body
    assert "openai/gpt-5.1" in body
    assert "Nothing waiting for this host" in body


def test_lists_of_models_and_hosts(client, viewer, fleet):
    login(client, viewer)
    body = client.get("/models/").content.decode()
    assert "llamacpp/glm-4.6" in body
    body = client.get("/hosts/").content.decode()
    assert XEON in body
    assert "maria-workstation" in body


def test_host_model_page_rules_efficacy_and_calibration(client, viewer, fleet):
    url = f"/hosts/{AMD}/models/anthropic/claude-sonnet-4-5/"
    body = login(client, viewer).get(url).content.decode()
    # nullOptionalDrop: before=3, after=2 → still helping, but last fired long ago.
    assert "nullOptionalDrop" in body
    assert "Recurred 2× with the rule vs 3× without" in body
    assert "Has not fired for 30 days" in body
    assert "Teach statistics" in body
    assert "Probe and calibration" in body


def test_host_model_page_calibrated_protocol(client, viewer, fleet):
    body = login(client, viewer).get(f"/hosts/{XEON}/models/llamacpp/glm-4.6/")
    text = body.content.decode()
    assert 'class="badge badge-calibrated"' in text
    assert "badge-text-protocol" in text


def test_host_model_events_are_filtered_and_paginated(client, viewer, fleet):
    hm = fleet[f"{AMD}|openai/gpt-5.1"]
    for i in range(60):
        add_event(hm, i, phase="execution" if i % 2 else "policy")
    url = f"/hosts/{AMD}/models/openai/gpt-5.1/"
    login(client, viewer)
    response = client.get(url, {"phase": "policy"}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert "<html" not in body
    assert body.lstrip().startswith('<section class="card" id="events"')
    assert body.count('<td class="nowrap">') == 30
    full = client.get(url).content.decode()
    assert "Older events" in full
    cursor = full.split("cursor=")[1].split("#")[0].split('"')[0].split("&")[0]
    second = client.get(url, {"cursor": cursor}, HTTP_HX_REQUEST="true")
    assert second.content.decode().count('<td class="nowrap">') == 10
    bad = client.get(url, {"cursor": "!!!"}).content.decode()
    assert "was not understood" in bad
