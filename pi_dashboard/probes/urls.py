app_name = "probes"
urlpatterns: list[object] = []
