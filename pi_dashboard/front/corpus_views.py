"""The fleet-wide failure corpus page and its `failure-corpus.jsonl` export."""

from datetime import datetime
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.front.pages import corpus
from pi_dashboard.front.pages.ranges import RANGES
from pi_dashboard.ingest import corpus_export
from pi_dashboard.lib import dayrange

DEFAULT_RANGE = "30d"
EXPORT_CHUNK = 500


class CorpusFilterForm(dayrange.DayRangeForm):
    model = forms.CharField(required=False, max_length=600)
    host = forms.CharField(required=False, max_length=200)
    range = forms.ChoiceField(
        required=False, choices=[(k, r.label) for k, r in RANGES.items()]
    )

    def selection(self, now: datetime) -> corpus.Selection:
        """From/To (whole UTC days) win over the range; the range defaults to 30 d."""
        data = self.cleaned_data
        since, until = self.day_bounds()
        time_range = RANGES[data.get("range") or DEFAULT_RANGE]
        return corpus.Selection(
            since=since or time_range.since(now),
            until=until,
            model_key=data.get("model", ""),
            host_id=data.get("host", ""),
        )


@require_GET
@role_required(Role.VIEWER)
def corpus_page(request: HttpRequest) -> HttpResponse:
    form = CorpusFilterForm(request.GET)
    now = timezone.now()
    context: dict[str, Any] = {
        "form": form,
        "options": corpus.corpus_filter_options(),
        "ranges": RANGES,
        "default_range": DEFAULT_RANGE,
    }
    if form.is_valid():
        context["corpus"] = corpus.corpus_groups(form.selection(now), now=now)
    status = 200 if form.is_valid() else 400
    return render(request, "fleet/failure_corpus.html", context, status=status)


@require_GET
@role_required(Role.VIEWER)
def corpus_export_jsonl(request: HttpRequest) -> HttpResponse | StreamingHttpResponse:
    """The selection's records, oldest first, as pi writes `failure-corpus.jsonl`."""
    form = CorpusFilterForm(request.GET)
    if not form.is_valid():
        return dayrange.bad_filter_response(form)
    rows = (
        corpus.corpus_queryset(form.selection(timezone.now()))
        .order_by("ts", "id")
        .iterator(chunk_size=EXPORT_CHUNK)
    )
    response = StreamingHttpResponse(
        (corpus_export.pi_line(row) for row in rows),
        content_type="application/x-ndjson",
    )
    response["Content-Disposition"] = 'attachment; filename="failure-corpus.jsonl"'
    return response
