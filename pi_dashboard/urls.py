from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from pi_dashboard.api import api

urlpatterns = [
    path("api/v1/", api.urls),
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
]
