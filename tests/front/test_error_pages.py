"""Error pages in the site's layout, a favicon, a styled login (issue 12 item 10)."""

import pytest
from django.test import Client, RequestFactory
from django.views.defaults import server_error

LAYOUT = 'class="topbar"'
FAVICON = 'rel="icon" href="/static/favicon.svg"'


def test_404_is_in_the_layout(viewer) -> None:
    client = Client()
    client.force_login(viewer)
    response = client.get("/hosts/no-such-host/")
    body = response.content.decode()
    assert response.status_code == 404
    assert "Not found" in body
    assert LAYOUT in body
    assert 'href="/"' in body  # the way back
    assert "Fleet" in body  # the nav, for a logged-in user


def test_403_is_in_the_layout(viewer) -> None:
    client = Client()
    client.force_login(viewer)
    response = client.get("/agents/")
    body = response.content.decode()
    assert response.status_code == 403
    assert "Not allowed" in body
    assert "<strong>Admin</strong> role" in body
    assert LAYOUT in body


@pytest.mark.django_db
def test_500_is_in_the_layout_without_a_request_context() -> None:
    # Django renders 500.html with no context processors: it must still render.
    response = server_error(RequestFactory().get("/"))
    body = response.content.decode()
    assert response.status_code == 500
    assert "Something went wrong" in body
    assert LAYOUT in body
    assert FAVICON in body


@pytest.mark.django_db
def test_login_page_is_styled_and_has_a_favicon() -> None:
    client = Client()
    body = client.get("/login/").content.decode()
    assert 'class="card login"' in body
    assert FAVICON in body
    assert 'class="btn btn-primary"' in body
    icon = client.get("/favicon.ico", follow=True)
    assert icon.status_code == 200
    assert b"<svg" in b"".join(icon.streaming_content)  # type: ignore[attr-defined]


@pytest.mark.django_db
def test_failed_login_says_so_in_the_form() -> None:
    response = Client().post("/login/", {"username": "nobody", "password": "x"})
    assert 'class="alert alert-error"' in response.content.decode()
