from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "pi_dashboard.accounts"
    label = "accounts"
