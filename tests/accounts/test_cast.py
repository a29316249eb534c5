"""A named cast over every write: each API write operation and each POST page.

viewer, operator, admin (the role, not a superuser), superuser, anonymous. The
tables name the role each write needs; a write missing from them fails the
coverage tests, so a new operation or page cannot ship unclassified.
"""

import json
import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from pi_dashboard.accounts import services as account_services
from pi_dashboard.accounts.models import Role
from pi_dashboard.api import api
from pi_dashboard.audit.models import AuditEntry, AuditOutcome
from pi_dashboard.probes import services as probe_services
from tests.conftest import make_user

pytestmark = pytest.mark.django_db

CAST = ["anonymous", "viewer", "operator", "admin", "superuser"]
RANK = {"anonymous": 0, "viewer": 1, "operator": 2, "admin": 3, "superuser": 4}
NEEDS = {Role.VIEWER: 1, Role.OPERATOR: 2, Role.ADMIN: 3}
AGENT = "agent token"  # no person may act as an agent
PUBLIC = "public"
NO_SUCH_UUID = "6f1c1c2e-0000-4000-8000-000000000000"
ENDPOINT = {
    "name": "cast-endpoint",
    "base_url": "http://127.0.0.1:9/v1",
    "server_model": "m",
    "model_key": "openai/m",
}

# operationId suffix -> (who may, method, path, JSON body)
API_WRITES: dict[str, tuple[Any, str, str, Any]] = {
    "ingest_events": (AGENT, "POST", "/ingest/events", None),
    "ingest_corpus": (AGENT, "POST", "/ingest/corpus", None),
    "ingest_stats": (AGENT, "POST", "/ingest/stats", None),
    "ingest_snapshot": (AGENT, "POST", "/ingest/snapshot", None),
    "agent_heartbeat": (AGENT, "POST", "/agent/heartbeat", None),
    "ack_command": (AGENT, "POST", f"/agent/commands/{NO_SUCH_UUID}/ack", None),
    "issue_agent_token": (Role.ADMIN, "POST", "/agents", {"name": "cast-agent"}),
    "revoke_agent_token": (Role.ADMIN, "POST", f"/agents/{NO_SUCH_UUID}/revoke", None),
    "create_command": (
        Role.OPERATOR,
        "POST",
        "/commands",
        {
            "host": "no-such-host",
            "model": "openai/m",
            "kind": "remove_rule",
            "params": {"mode": "jsonStringParse"},
        },
    ),
    "create_endpoint": (
        Role.OPERATOR,
        "POST",
        "/endpoints",
        {**ENDPOINT, "name": "cast-new"},
    ),
    "update_endpoint": (Role.OPERATOR, "PUT", "/endpoints/{endpoint}", ENDPOINT),
    "delete_endpoint": (Role.OPERATOR, "DELETE", "/endpoints/{endpoint}", None),
    "probe_endpoint": (Role.OPERATOR, "POST", "/endpoints/{endpoint}/probe", None),
    "create_rule": (
        Role.OPERATOR,
        "POST",
        "/alert-rules",
        {"name": "cast-rule", "signal": "agent_down"},
    ),
    "update_rule": (Role.OPERATOR, "PATCH", "/alert-rules/999999", {"threshold": 2}),
    "delete_rule": (Role.OPERATOR, "DELETE", "/alert-rules/999999", None),
    "acknowledge_alert": (Role.OPERATOR, "POST", "/alerts/999999/ack", None),
    "create_maintenance_window": (
        Role.OPERATOR,
        "POST",
        "/maintenance-windows",
        {
            "name": "cast-window",
            "starts_at": "2026-12-05T08:00:00Z",
            "ends_at": "2026-12-05T09:00:00Z",
        },
    ),
    "update_maintenance_window": (
        Role.OPERATOR,
        "PUT",
        "/maintenance-windows/999999",
        {"name": "w", "weekdays": [1], "start_time": "01:00", "duration_minutes": 5},
    ),
    "delete_maintenance_window": (
        Role.OPERATOR,
        "DELETE",
        "/maintenance-windows/999999",
        None,
    ),
}

# URL name -> who may POST there
POST_PAGES: dict[str, Any] = {
    "login": PUBLIC,
    "logout": PUBLIC,
    "fleet:action_remove_rule": Role.OPERATOR,
    "fleet:action_reset_protocol": Role.OPERATOR,
    "fleet:action_probe": Role.OPERATOR,
    "fleet:action_probe_model": Role.OPERATOR,
    "fleet:action_remove_rule_everywhere": Role.OPERATOR,
    "control:command_retry": Role.OPERATOR,
    "probes:endpoint_new": Role.OPERATOR,
    "probes:endpoint_edit": Role.OPERATOR,
    "probes:endpoint_delete": Role.OPERATOR,
    "probes:endpoint_probe": Role.OPERATOR,
    "probes:schedules": Role.OPERATOR,
    "probes:schedule_edit": Role.OPERATOR,
    "probes:schedule_pause": Role.OPERATOR,
    "probes:schedule_resume": Role.OPERATOR,
    "probes:schedule_delete": Role.OPERATOR,
    "probes:fleet_start": Role.OPERATOR,
    "accounts:users": Role.ADMIN,
    "accounts:user_role": Role.ADMIN,
    "accounts:user_deactivate": Role.ADMIN,
    "accounts:user_activate": Role.ADMIN,
    "fleet:agents": Role.ADMIN,
    "fleet:agent_rotate": Role.ADMIN,
    "fleet:agent_revoke": Role.ADMIN,
    **{
        f"alerts:{name}": Role.OPERATOR
        for name in (
            "ack",
            "rule_new",
            "rule_edit",
            "rule_delete",
            "channel_new",
            "channel_edit",
            "channel_delete",
            "channel_test",
            "silences",  # viewers read it; creating a silence is the POST
            "silence_end",
            "maintenance_create",
            "maintenance_edit",
            "maintenance_delete",
            "grace_save",
            "grace_delete",
            "host_tag",
        )
    },
    "accounts:tokens": Role.VIEWER,  # everyone manages their own operator tokens
    "accounts:token_revoke": Role.VIEWER,
}
PLACEHOLDERS = {
    "int": "999999",
    "str": "no-such-host",
    "path": "a/b",
    "uuid": NO_SUCH_UUID,
}


@pytest.fixture(autouse=True)
def _fast_passwords(settings: Any) -> None:
    # Five users per test: PBKDF2's deliberate slowness would dominate the run.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def person(who: str) -> User | None:
    if who == "anonymous":
        return None
    if who == "superuser":
        return User.objects.create_superuser("sam-super", "", "pw-sam")
    return make_user(f"cast-{who}", Role(who))


def may(who: str, needed: Any) -> bool:
    return needed is PUBLIC or (needed is not AGENT and RANK[who] >= NEEDS[needed])


def api_write_ids() -> set[str]:
    schema = api.get_openapi_schema()
    return {
        op["operationId"]
        for ops in schema["paths"].values()
        for method, op in ops.items()
        if method in {"post", "put", "patch", "delete"}
    }


def test_every_api_write_is_in_the_cast_table() -> None:
    ids = api_write_ids()
    suffixes = {i for i in ids if not any(i.endswith("_" + s) for s in API_WRITES)}
    assert not suffixes, f"classify in API_WRITES: {sorted(suffixes)}"
    assert len(ids) == len(API_WRITES)


@pytest.mark.parametrize("who", CAST)
@pytest.mark.parametrize("operation", sorted(API_WRITES))
def test_api_write(operation: str, who: str) -> None:
    needed, method, path, body = API_WRITES[operation]
    endpoint = probe_services.endpoint_create(
        data=probe_services.EndpointData(**ENDPOINT)
    )
    user = person(who)
    headers = {}
    if user is not None:
        _, secret = account_services.api_token_issue(actor=user, user=user, name="c")
        headers["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
    # CSRF enforced as in a browser or curl: the test client skips it by default.
    response = Client(enforce_csrf_checks=True).generic(
        method,
        "/api/v1" + path.format(endpoint=endpoint.pk),
        data=b"" if body is None else json.dumps(body),
        content_type="application/json",
        **headers,
    )
    status = response.status_code
    assert status < 500, response.content
    if who == "anonymous" or needed is AGENT:
        assert status == 401, response.content
        assert response["WWW-Authenticate"].startswith("Bearer")
        assert response.json()["code"] == "unauthorized"
    elif not may(who, needed):
        assert status == 403, response.content
        assert response.json()["code"] == "forbidden"
    else:
        assert status not in {401, 403}, response.content


def url_patterns(
    resolver: URLResolver, prefix: str = "", namespace: str = ""
) -> list[tuple[str, str]]:
    """(name, URL with placeholders) for every named page, outside /api/ and /admin/."""
    found: list[tuple[str, str]] = []
    for item in resolver.url_patterns:
        route = str(item.pattern)
        if route.startswith(("api/", "^api/", "admin/")):
            continue
        if isinstance(item, URLResolver):
            ns = f"{item.namespace}:" if item.namespace else namespace
            found += url_patterns(item, prefix + route, ns)
        elif isinstance(item, URLPattern) and item.name:
            url = prefix + route
            for converter, value in PLACEHOLDERS.items():
                url = re.sub(rf"<{converter}:\w+>", value, url)
            found.append((namespace + item.name, "/" + url))
    return found


PAGES = url_patterns(get_resolver())


@pytest.mark.parametrize(("name", "url"), PAGES)
def test_every_post_page_is_in_the_cast_table(name: str, url: str) -> None:
    status = Client().post(url).status_code
    if name in POST_PAGES:
        assert status != 405, f"{name} no longer takes POST; drop it from POST_PAGES"
    else:
        assert status == 405, f"{name} takes POST: classify it in POST_PAGES"


@pytest.mark.parametrize("who", CAST)
@pytest.mark.parametrize(("name", "url"), [(n, u) for n, u in PAGES if n in POST_PAGES])
def test_post_page(name: str, url: str, who: str) -> None:
    needed = POST_PAGES[name]
    client = Client()
    user = person(who)
    if user is not None:
        client.force_login(user)
    response = client.post(url)
    status = response.status_code
    assert status < 500, response.content
    if needed is PUBLIC:
        return
    if who == "anonymous":
        assert status == 302
        assert response["Location"].startswith("/login/")
    elif not may(who, needed):
        assert status == 403
        assert AuditEntry.objects.filter(outcome=AuditOutcome.REFUSED).exists()
    else:
        assert status != 403
        assert not (status == 302 and response["Location"].startswith("/login/"))
