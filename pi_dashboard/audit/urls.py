from django.urls import path

from pi_dashboard.audit import views

app_name = "audit"
urlpatterns = [
    path("audit/", views.audit, name="audit"),
    path("audit.csv", views.audit_csv, name="audit_csv"),
]
