"""Issue, revoke or list operator API tokens from the command line."""

from typing import Any

from django.contrib.auth.models import User
from django.core.management.base import BaseCommand, CommandError, CommandParser

from pi_dashboard.accounts import selectors, services
from pi_dashboard.accounts.models import ApiToken
from pi_dashboard.lib.errors import DomainError


class Command(BaseCommand):
    help = (
        "Operator API tokens (pid_op_…): `issue --user U --name N` prints a new "
        "secret once; `revoke --user U --prefix P`; `list --user U`."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["issue", "revoke", "list"])
        parser.add_argument("--user", required=True, help="username of the owner")
        parser.add_argument("--name", default="", help="token name (issue)")
        parser.add_argument(
            "--prefix", default="", help="the token's first characters (revoke)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        user = User.objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user {options['user']!r}.")
        try:
            getattr(self, f"_{options['action']}")(user, options)
        except DomainError as error:
            raise CommandError(error.detail) from error

    def _issue(self, user: User, options: dict[str, Any]) -> None:
        token, secret = services.api_token_issue(
            actor=None, user=user, name=options["name"] or "command line"
        )
        self.stderr.write(f"Token “{token.name}” for {user.username} (shown once):")
        self.stdout.write(secret)

    def _revoke(self, user: User, options: dict[str, Any]) -> None:
        prefix = options["prefix"]
        matches = list(ApiToken.objects.filter(user=user, prefix__startswith=prefix))
        if not prefix or len(matches) != 1:
            raise CommandError(
                f"--prefix must match exactly one of {user.username}'s tokens "
                f"(it matches {len(matches)}); see `operator_token list`."
            )
        services.api_token_revoke(actor=None, token=matches[0])
        self.stdout.write(f"Revoked {matches[0].prefix}… ({matches[0].name}).")

    def _list(self, user: User, options: dict[str, Any]) -> None:
        for token in selectors.api_token_list(user=user):
            state = (
                f"revoked {token.revoked_at:%Y-%m-%d}" if token.revoked_at else "active"
            )
            used = (
                f"{token.last_used_at:%Y-%m-%d %H:%M}"
                if token.last_used_at
                else "never"
            )
            self.stdout.write(
                f"{token.prefix}…\t{state}\tlast used {used}\t{token.name}"
            )
