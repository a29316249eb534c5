"""Create the first admin on an empty install and print its login once."""

from typing import Any

from django.core.management.base import BaseCommand

from pi_dashboard.accounts import services


class Command(BaseCommand):
    help = "Create user 'admin' with a random password when no admin exists yet."

    def handle(self, *args: Any, **options: Any) -> None:
        password = services.admin_ensure()
        if password is None:
            self.stdout.write(
                "Admin login: an admin already exists "
                '(reset with `make manage ARGS="changepassword admin"`).'
            )
            return
        self.stdout.write(
            self.style.SUCCESS(
                f"\n  First admin login:  user 'admin'  password '{password}'\n"
                "  (shown once; change it with "
                '`make manage ARGS="changepassword admin"`)\n'
            )
        )
