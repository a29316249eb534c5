"""Create the first admin on an empty install and print its login once."""

import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from pi_dashboard.accounts.models import Profile, Role


class Command(BaseCommand):
    help = "Create user 'admin' with a random password when no admin exists yet."

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        if User.objects.filter(is_superuser=True).exists():
            self.stdout.write(
                "Admin login: an admin already exists "
                "(reset with `.venv/bin/python manage.py changepassword admin`)."
            )
            return
        password = secrets.token_urlsafe(12)
        user = User.objects.create_superuser("admin", "", password)
        Profile.objects.update_or_create(user=user, defaults={"role": Role.ADMIN})
        self.stdout.write(
            self.style.SUCCESS(
                f"\n  First admin login:  user 'admin'  password '{password}'\n"
                "  (shown once; change it under Admin → Users)\n"
            )
        )
