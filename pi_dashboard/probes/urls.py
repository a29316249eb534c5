from django.urls import path

app_name = "probes"
urlpatterns: list[object] = []
