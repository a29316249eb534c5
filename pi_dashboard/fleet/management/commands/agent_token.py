"""Issue, rotate, revoke, rebind and list agent tokens: `agent_token issue NAME`."""

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from pi_dashboard.fleet import services
from pi_dashboard.fleet.models import Agent

ACTOR = "manage.py agent_token"


def agent_find(ref: str) -> Agent:
    """An agent by id, or by name when the name is unique."""
    by_id = Agent.objects.filter(pk=ref).first() if _is_uuid(ref) else None
    if by_id is not None:
        return by_id
    named = list(Agent.objects.filter(name=ref)[:2])
    if len(named) == 1:
        return named[0]
    if named:
        raise CommandError(f"More than one agent is named {ref!r}; use its id.")
    raise CommandError(f"No agent {ref!r}.")


def _is_uuid(ref: str) -> bool:
    import uuid

    try:
        uuid.UUID(ref)
    except ValueError:
        return False
    return True


class Command(BaseCommand):
    help = "Manage pi-dashboard-agent tokens (the secret is printed once)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser(
            "issue", help="create an agent and print its token"
        ).add_argument("name")
        sub.add_parser("rotate", help="replace an agent's token").add_argument("agent")
        sub.add_parser("revoke", help="stop an agent's token working").add_argument(
            "agent"
        )
        sub.add_parser(
            "rebind", help="let the agent bind to the host its next heartbeat names"
        ).add_argument("agent")
        sub.add_parser("list", help="list agents (never their tokens)")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "issue":
            agent, secret = services.agent_issue(name=options["name"], actor=ACTOR)
            self.stdout.write(f"agent {agent.pk} ({agent.name})")
            self.stdout.write(f"token {secret}")
            self.stdout.write("The token is shown once; only its hash is stored.")
        elif action == "rotate":
            agent = agent_find(options["agent"])
            secret = services.agent_rotate(agent=agent, actor=ACTOR)
            self.stdout.write(f"agent {agent.pk} ({agent.name})")
            self.stdout.write(f"token {secret}")
            self.stdout.write("The old token no longer works.")
        elif action == "revoke":
            agent = agent_find(options["agent"])
            services.agent_revoke(agent=agent, actor=ACTOR)
            self.stdout.write(f"revoked agent {agent.pk} ({agent.name})")
        elif action == "rebind":
            agent = agent_find(options["agent"])
            was = agent.host.pi_id if agent.host else "-"
            services.agent_rebind(agent=agent, actor=ACTOR)
            self.stdout.write(
                f"released agent {agent.pk} ({agent.name}) from host {was}: its next "
                "heartbeat binds it"
            )
        else:
            for agent in Agent.objects.select_related("host").order_by("name"):
                state = "active" if agent.is_active else "revoked"
                host = agent.host.pi_id if agent.host else "-"
                if agent.claimed_host_id:
                    host += f" (claims {agent.claimed_host_id}: rebind?)"
                seen = (
                    agent.last_contact_at.isoformat() if agent.last_contact_at else "-"
                )
                self.stdout.write(
                    f"{agent.pk}  {agent.name}  {agent.token_prefix}…  {state}  "
                    f"host={host}  hostname={agent.hostname or '-'}  last={seen}"
                )
