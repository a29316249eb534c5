from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path

from pi_dashboard.api import api, api_not_found

urlpatterns = [
    path("api/v1/", api.urls),
    # Ingest (issue #2): an unknown /api/ path answers JSON, never Django's HTML 404.
    re_path(r"^api/", api_not_found),
    path("admin/", admin.site.urls),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="accounts/login.html"),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("pi_dashboard.fleet.urls")),
    path("", include("pi_dashboard.control.urls")),
    path("", include("pi_dashboard.probes.urls")),
    path("", include("pi_dashboard.accounts.urls")),
    path("", include("pi_dashboard.alerts.urls")),
]
