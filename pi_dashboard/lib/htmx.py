"""htmx on the pages: the typed request, the partial check and the stop-polling status.

Views keep `HttpRequest` in their signatures (Django's URL resolver passes any
request); django-htmx's middleware has set `request.htmx` on every one of them.
"""

from typing import cast

from django.http import HttpRequest
from django_htmx.http import HttpResponseStopPolling
from django_htmx.middleware import HtmxDetails

# htmx stops polling an element whose response has this status (and swaps it in).
STOP_POLLING = HttpResponseStopPolling.status_code


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def htmx_of(request: HttpRequest) -> HtmxDetails:
    return cast(HtmxHttpRequest, request).htmx


def is_htmx(request: HttpRequest) -> bool:
    """Sent by htmx (a boosted link too)."""
    return bool(htmx_of(request))


def wants_partial(request: HttpRequest) -> bool:
    """htmx asks for the page's live part; a boosted link wants the whole page."""
    htmx = htmx_of(request)
    return bool(htmx) and not htmx.boosted


def htmx_target(request: HttpRequest) -> str:
    """The element id an htmx request will swap ("" for a full page)."""
    return str(htmx_of(request).target or "") if wants_partial(request) else ""
