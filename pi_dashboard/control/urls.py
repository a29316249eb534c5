app_name = "control"
urlpatterns: list[object] = []
