"""The demo's rows in the dashboard: its agents' tokens, probe endpoints, a schedule.

Everything goes through the owning apps' services, as any other caller would.
"""

from django.db import transaction

from pi_dashboard.demo.shift import host_ids
from pi_dashboard.fleet import services as fleet_services
from pi_dashboard.fleet.models import Agent, Host
from pi_dashboard.probes import services as probe_services
from pi_dashboard.probes.models import Endpoint, ProbeSchedule, SelectionKind, Trigger

ACTOR = "demo"
SCHEDULE_NAME = "demo: every 3 minutes"
TAG = "demo"
DRIFT_TAG = "demo-drift"

# Scripted model-server behaviours (its model id picks one) standing for the demo
# hosts' models: native, text-protocol in two dialects, none, and one that drifts.
ENDPOINTS = (
    ("openai/gpt-5.1", "native-correct@150"),
    ("anthropic/claude-sonnet-4-5", "native-correct@250"),
    ("ollama/gpt-oss:20b", "native-echo-only@200"),
    ("llamacpp/glm-4.6", "text-fenced-json@300"),
    ("llamacpp/qwen3-coder-480b-a35b", "text-tool-call@300"),
    ("ollama/qwen3-coder:30b", "garbage@100"),
    ("openrouter/deepseek/deepseek-v3.2", "drifting@200"),
)


def endpoint_name(model_key: str) -> str:
    return f"demo {model_key}"


def fleet_is_empty_or_demo() -> bool:
    """True when every host in the database is a demo host (or there is none).

    Whether to resume or rebuild the demo is the manifest's business
    (`supervisor.prepare`).
    """
    return not Host.objects.exclude(pi_id__in=host_ids()).exists()


def agents_exist(agent_ids: list[str]) -> bool:
    """Whether the demo's agents (from its manifest) are live in this database."""
    live = Agent.objects.filter(id__in=agent_ids, revoked_at__isnull=True)
    return bool(agent_ids) and live.count() == len(agent_ids)


def agent_issue(*, name: str) -> tuple[str, str]:
    """A new agent and its token (shown once, kept in the agent's config)."""
    agent, token = fleet_services.agent_issue(name=name, actor=ACTOR)
    return str(agent.id), token


@transaction.atomic
def probes_register(*, port: int) -> None:
    """Endpoints on the scripted server, a schedule, and a first probe right away."""
    base_url = f"http://127.0.0.1:{port}/v1"
    for model_key, behaviour in ENDPOINTS:
        name = endpoint_name(model_key)
        data = probe_services.EndpointData(
            name=name,
            base_url=base_url,
            server_model=behaviour,
            model_key=model_key,
            timeout_seconds=10.0,
            tags=[TAG, DRIFT_TAG] if behaviour.startswith("drifting") else [TAG],
        )
        endpoint = Endpoint.objects.filter(name=name).first()
        if endpoint is None:
            probe_services.endpoint_create(data=data)
        else:
            # The model server's port changes with every start.
            probe_services.endpoint_update(endpoint=endpoint, data=data)
    schedule = ProbeSchedule.objects.filter(name=SCHEDULE_NAME).first()
    if schedule is not None and schedule.is_paused:
        probe_services.schedule_set_paused(schedule=schedule, is_paused=False)
    if schedule is None:
        probe_services.schedule_save(
            schedule=None,
            data=probe_services.ScheduleData(
                name=SCHEDULE_NAME,
                every_seconds=180,
                selection_kind=SelectionKind.TAG,
                selection_value=TAG,
                jitter_seconds=5,
            ),
            user=None,
        )
    probe_services.fleet_probe_start(
        key=None,
        trigger=Trigger.FLEET,
        selection_kind=SelectionKind.TAG,
        selection_value=TAG,
    )


@transaction.atomic
def probes_pause() -> int:
    """Stop probing the demo's model server while no demo runs (it is not there).

    Its endpoints are disabled and its schedule paused; `probes_register` turns
    them back on when the demo starts again. Returns how many rows it changed.
    """
    changed = 0
    names = [endpoint_name(model_key) for model_key, _ in ENDPOINTS]
    for endpoint in Endpoint.objects.filter(name__in=names, is_enabled=True):
        probe_services.endpoint_set_enabled(endpoint=endpoint, is_enabled=False)
        changed += 1
    for schedule in ProbeSchedule.objects.filter(name=SCHEDULE_NAME, is_paused=False):
        probe_services.schedule_set_paused(schedule=schedule, is_paused=True)
        changed += 1
    return changed


def probes_drift_kick() -> None:
    """Probe the drifting endpoint once more: its verdict flips on every probe."""
    probe_services.fleet_probe_start(
        key=None,
        trigger=Trigger.FLEET,
        selection_kind=SelectionKind.TAG,
        selection_value=DRIFT_TAG,
    )
