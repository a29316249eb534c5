from django.urls import path

app_name = "control"
urlpatterns: list[object] = []
