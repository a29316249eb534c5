"""The design system's template tags: `{% load ui %}` in any template.

Times:   {{ dt|reltime }} -> <time datetime="…" title="exact UTC">3 h ago</time>
         {{ iso|age_days }} -> "12d" (pi's /toolhealth ages)
Numbers: {{ n|qty:"event" }} -> "1,204 events";  {{ b|bytesize }} -> "1.2 MiB"
         {{ x|rate:"/h" }} -> "0.42/h";  {{ ms|duration_ms }} -> "1.3 s"
Badges:  {% verdict_badge status grade %} · {% command_badge command %}
         {% state_badge state %} · {% outcome_badge outcome %}
         {% protocol_badge status %} · {% role_badge role %}
Nav:     {% nav_link "Label" "ns:name" ["ns:fallback" …] %}
         {% optional_url "ns:name" as v %} · {% range_switcher %}
"""

import json
from datetime import UTC, datetime
from typing import Any

from django import template
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from pi_dashboard.front.pages.ranges import CUSTOM_PARAMS, RANGES, range_from_request
from pi_dashboard.lib.isotime import parse_iso
from pi_dashboard.probes import chat
from pi_dashboard.probes import selectors as probe_selectors

register = template.Library()

VERDICT_LABELS = {
    "native": "native",
    "text-protocol": "text-protocol",
    "none": "none",
    "": "unprobed",
}
COMMAND_STATES = {"pending", "delivered", "applied", "failed", "expired", "reverted"}


def as_datetime(value: Any) -> datetime | None:
    """A datetime from a datetime or an ISO string (pi's JSON), else None."""
    if isinstance(value, datetime):
        return value if timezone.is_aware(value) else timezone.make_aware(value)
    return parse_iso(value)


def relative(dt: datetime, now: datetime) -> str:
    seconds = (now - dt).total_seconds()
    future = seconds < 0
    seconds = abs(seconds)
    if seconds < 45:
        return "just now"
    for size, unit in ((86400 * 365, "y"), (86400, "d"), (3600, "h"), (60, "min")):
        if seconds >= size:
            n = int(seconds // size)
            return f"in {n} {unit}" if future else f"{n} {unit} ago"
    return "just now"


@register.filter
def reltime(value: Any, never: str = "never") -> SafeString:
    """Relative time with the exact UTC time on hover and in `datetime`."""
    if value in (None, ""):
        return format_html('<span class="muted">{}</span>', never)
    dt = as_datetime(value)
    if dt is None:
        return format_html(
            '<span class="muted" title="unparseable time {}">age unknown</span>',
            value,
        )
    exact = dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return format_html(
        '<time datetime="{}" title="{}">{}</time>',
        dt.isoformat(),
        exact,
        relative(dt, timezone.now()),
    )


@register.filter
def age_days(value: Any) -> str:
    """Whole days since `value`, as pi's /toolhealth shows ages ("12d")."""
    dt = as_datetime(value)
    if dt is None:
        return "age unknown"
    return f"{int((timezone.now() - dt).total_seconds() // 86400)}d"


def plural(unit: str, n: float) -> str:
    if n == 1 or not unit:
        return unit
    if unit.endswith("y") and not unit.endswith(("ay", "ey", "oy")):
        return unit[:-1] + "ies"
    return unit + ("es" if unit.endswith(("s", "x", "ch", "sh")) else "s")


@register.filter
def qty(value: Any, unit: str = "") -> str:
    """A count with thousands separators and its unit, pluralised: "1,204 events"."""
    if value is None or value == "":
        return "—"
    n = float(value)
    text = f"{int(n):,}" if n == int(n) else f"{n:,.1f}"
    word = plural(unit, n)
    return f"{text} {word}" if word else text


@register.filter
def rate(value: Any, suffix: str = "/h") -> str:
    """A rate with sensible precision: 0 → "0/h", 0.042 → "0.04/h", 12.3 → "12/h"."""
    if value is None:
        return "—"
    x = float(value)
    if x == 0:
        text = "0"
    elif x < 0.01:
        text = "<0.01"
    elif x < 10:
        text = f"{x:.2f}".rstrip("0").rstrip(".")
    else:
        text = f"{x:,.0f}"
    return f"{text}{suffix}"


@register.filter
def bytesize(value: Any) -> str:
    """Bytes in IEC units: 1536 → "1.5 KiB"."""
    if value is None or value == "":
        return "—"
    n = float(value)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{int(n)} B" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover - loop always returns


@register.filter
def duration_ms(value: Any) -> str:
    """Milliseconds as "850 ms", "1.3 s", "2 min 5 s"."""
    if value is None or value == "":
        return "—"
    ms = float(value)
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(int(ms // 1000), 60)
    return f"{minutes} min {seconds} s"


@register.filter
def percent(value: Any, digits: int = 0) -> str:
    if value is None:
        return "—"
    return f"{float(value) * 100:.{int(digits)}f} %"


@register.simple_tag
def verdict_badge(status: str | None, grade: str | None = None) -> SafeString:
    """pi's probe verdict (native / text-protocol / none / unprobed), with its grade."""
    status = status or ""
    label = VERDICT_LABELS.get(status, status)
    css = "unprobed" if status not in VERDICT_LABELS or not status else status
    badge = format_html(
        '<span class="badge badge-{}" title="tool-call verdict">{}</span>', css, label
    )
    if grade:
        return format_html(
            '{} <span class="badge badge-grade" title="native grade">{}</span>',
            badge,
            grade,
        )
    return badge


@register.simple_tag
def state_badge(state: str, confirmed: bool = False) -> SafeString:
    """A command state; "confirmed" once a later snapshot showed the effect."""
    if confirmed:
        return mark_safe(  # noqa: S308 - a constant
            '<span class="badge badge-confirmed" title="applied, and the next '
            'snapshot shows the change">confirmed</span>'
        )
    css = state if state in COMMAND_STATES else "neutral"
    return format_html('<span class="badge badge-{}">{}</span>', css, state)


@register.simple_tag
def command_badge(command: Any) -> SafeString:
    result = command.result if isinstance(command.result, dict) else {}
    if command.state == "applied" and result.get("removed") is False:
        return mark_safe(  # noqa: S308 - a constant
            '<span class="badge badge-neutral" title="pi had nothing to remove">'
            "nothing to remove</span>"
        )
    confirmed = command.state == "applied" and command.confirmed_at is not None
    return state_badge(command.state, confirmed=confirmed)


@register.simple_tag
def outcome_badge(outcome: str) -> SafeString:
    """An audit outcome: ok / refused / failed."""
    css = outcome if outcome in {"ok", "refused", "failed"} else "neutral"
    return format_html('<span class="badge badge-{}">{}</span>', css, outcome)


@register.simple_tag
def protocol_badge(status: str | None) -> SafeString:
    """Text-protocol calibration: calibrated / failed / none."""
    if status == "calibrated":
        return mark_safe('<span class="badge badge-calibrated">calibrated</span>')  # noqa: S308
    if status == "failed":
        return mark_safe('<span class="badge badge-failed">failed</span>')  # noqa: S308
    return mark_safe('<span class="badge badge-neutral">none</span>')  # noqa: S308


@register.simple_tag
def role_badge(role: Any) -> SafeString:
    css = {"admin": "danger", "operator": "warn", "viewer": "info"}.get(
        str(role or ""), "neutral"
    )
    return format_html(
        '<span class="badge badge-{} no-dot">{}</span>', css, role or "no role"
    )


def first_url(names: tuple[str, ...]) -> str:
    for name in names:
        try:
            return reverse(name)
        except NoReverseMatch:
            continue
    return ""


@register.simple_tag
def optional_url(*names: str) -> str:
    """The first of `names` that resolves, or "" (for links to optional parts)."""
    return first_url(names)


@register.simple_tag(takes_context=True)
def nav_link(context: template.Context, label: str, *names: str) -> SafeString:
    """A nav item: current page marked, the time range carried along."""
    url = first_url(names)
    if not url:
        return format_html(
            '<li><span class="is-disabled" title="not available yet">{}</span></li>',
            label,
        )
    request = context.get("request")
    current = ""
    if request is not None:
        path = request.path
        matches = path == url if url == "/" else path.startswith(url)
        current = ' aria-current="page"' if matches else ""
        time_range = range_from_request(request)
        if time_range.is_custom or request.GET.get("range") in RANGES:
            url += "?" + time_range.query
    return format_html(
        '<li><a href="{}"{}>{}</a></li>', url, SafeString(current), label
    )


@register.inclusion_tag("_range_switcher.html", takes_context=True)
def range_switcher(context: template.Context) -> dict[str, Any]:
    """24 h / 7 d / 30 d / 90 d links and a custom From/To form, all keeping every
    other query parameter (paging starts again)."""
    request = context.get("request")
    if request is None:
        return {"links": []}
    current = range_from_request(request)
    others = request.GET.copy()
    for name in ("range", *CUSTOM_PARAMS, "cursor", "page"):
        others.pop(name, None)
    links = []
    for r in RANGES.values():
        params = others.copy()
        params["range"] = r.key
        links.append(
            {"label": r.label, "url": "?" + params.urlencode(), "on": r == current}
        )
    return {
        "links": links,
        "current": current,
        "keep": [(k, v) for k in others for v in others.getlist(k)],
        "since": request.GET.get("since", ""),
        "until": request.GET.get("until", ""),
        "today": timezone.localdate().isoformat(),
    }


@register.filter
def change_summary(value: Any) -> str:
    """A Change's before/after (a string or a small JSON object) in one short line."""
    if isinstance(value, dict):
        keys = ("status", "variant", "nativeGrade", "text", "mode")
        parts = [str(value[k]) for k in keys if value.get(k) not in (None, "")]
        if parts:
            return " · ".join(parts)
        return ", ".join(
            f"{k}={v}" for k, v in value.items() if not isinstance(v, dict)
        )
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


@register.filter
def pijson(value: Any) -> str:
    """JSON as written, keys in their order (never `pprint`'s sorted Python repr)."""
    return json.dumps(value, indent=2, ensure_ascii=False)


@register.filter
def request_json(value: Any) -> str:
    """A probe request (body or headers) in the order it was sent, as JSON."""
    return pijson(probe_selectors.request_in_order(value))


@register.filter
def reply_json(raw: str) -> str:
    """A non-streamed reply body: its JSON indented, keys kept in order."""
    try:
        return pijson(json.loads(raw))
    except (TypeError, ValueError):
        return raw


@register.filter
def stream_reply(raw: str) -> chat.Reply | None:
    """A streamed reply put together from its server-sent events (None if none)."""
    if not isinstance(raw, str) or "data:" not in raw:
        return None
    reply = chat.Reply()
    chat.parse_stream(raw, reply)
    return reply


@register.filter
def shown_when(field: Any) -> str:
    """The `data-show-when` rule of a form field: its form's SHOW_WHEN, if any."""
    rules = getattr(field.form, "SHOW_WHEN", {})
    return str(rules.get(field.name, "")) if isinstance(rules, dict) else ""
