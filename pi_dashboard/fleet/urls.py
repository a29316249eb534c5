from django.urls import path

from pi_dashboard.fleet import views

app_name = "fleet"
urlpatterns = [
    path("", views.overview, name="overview"),
]
