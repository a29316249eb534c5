from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.generic import RedirectView

from pi_dashboard.api import api, api_not_found

urlpatterns = [
    path("api/v1/", api.urls),
    # Ingest (issue #2): an unknown /api/ path answers JSON, never Django's HTML 404.
    re_path(r"^api/", api_not_found),
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico on pages that name none (JSON, the admin).
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"))),
    path(
        "login/",
        auth_views.LoginView.as_view(template_name="accounts/login.html"),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("pi_dashboard.front.urls")),
    path("", include("pi_dashboard.control.urls")),
    path("", include("pi_dashboard.audit.urls")),
    path("probes/", include("pi_dashboard.probes.urls")),
    path("", include("pi_dashboard.accounts.urls")),
    path("", include("pi_dashboard.alerts.urls")),
]
