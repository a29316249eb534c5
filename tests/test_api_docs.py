"""/api/v1/docs works offline (issue 12 item 3): Swagger UI is served from here."""

import re

import pytest
from django.test import Client


@pytest.mark.django_db
def test_swagger_ui_assets_are_local_and_served() -> None:
    client = Client()
    body = client.get("/api/v1/docs").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', body)
    assert any(a.endswith("swagger-ui-bundle.js") for a in assets)
    assert any(a.endswith("swagger-ui.css") for a in assets)
    for asset in assets:
        assert not re.match(r"^(https?:)?//", asset), f"{asset} needs the network"
        response = client.get(asset)
        assert response.status_code == 200, asset
        content = b"".join(response.streaming_content)  # type: ignore[attr-defined]
        assert len(content) > 100, asset
