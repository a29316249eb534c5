"""The fleet overview's cells, rendered in Python: `{% load fleet_matrix %}`.

A page holds hundreds of cells (25 hosts × every model); rendering each through
template nodes, `{% include %}` or per-cell `format_html` tags cost most of the
request. These tags build a row's markup with f-strings and escape every value once;
the classes and badges are the design system's (`ui.verdict_badge`, `ui.rate`).

    {% matrix_cells row %}   the <td> cells of one matrix row
    {% list_rows row %}      the <tr> rows of one host in the list view
"""

from html import escape

from django import template
from django.utils.safestring import SafeString, mark_safe

from pi_dashboard.front.pages.overview import Cell, HostRow
from pi_dashboard.front.templatetags.ui import VERDICT_LABELS, qty, rate, reltime

register = template.Library()

_EMPTY_CELL = '<td class="cell is-empty" aria-label="not used on this host">·</td>'
_PROTOCOL = {
    "calibrated": '<span class="badge badge-calibrated">calibrated</span>',
    "failed": '<span class="badge badge-failed">failed</span>',
}
_NO_PROTOCOL = '<span class="badge badge-neutral">none</span>'


def _verdict(status: str, grade: str = "") -> str:
    """Same markup as `{% verdict_badge %}`, without format_html per cell."""
    label = escape(VERDICT_LABELS.get(status, status))
    css = escape(status) if status and status in VERDICT_LABELS else "unprobed"
    badge = f'<span class="badge badge-{css}" title="tool-call verdict">{label}</span>'
    if grade:
        badge += (
            ' <span class="badge badge-grade" title="native grade">'
            f"{escape(grade)}</span>"
        )
    return badge


def _cell(cell: Cell, pi_id: str) -> str:
    muted = "nowrap" if cell.failures else "muted nowrap"
    return (
        f'<td class="cell"><a href="{escape(cell.url)}" class="cell-line" '
        f'aria-label="{escape(cell.model_key)} on {pi_id}">'
        f"{_verdict(cell.probe_status)}</a>"
        f'<div class="cell-line small"><span title="standing rules">'
        f"{qty(cell.rule_count, 'rule')}</span> "
        f'<span class="muted">·</span> '
        f'<span title="{qty(cell.failures, "failure")} in range" class="{muted}">'
        f"{rate(cell.rate)}</span></div></td>"
    )


@register.simple_tag
def matrix_cells(row: HostRow) -> SafeString:
    """Every cell of one host's matrix row, in column order."""
    pi_id = escape(row.host.pi_id)
    parts = [_EMPTY_CELL if c is None else _cell(c, pi_id) for c in row.cell_list]
    return mark_safe("".join(parts))  # noqa: S308 - every value escaped above


@register.simple_tag
def list_rows(row: HostRow, host_url: str) -> SafeString:
    """One table row per model of the host (list view)."""
    pi_id = escape(row.host.pi_id)
    names = escape(", ".join(row.hostnames))
    host = f'<a href="{escape(host_url)}" class="mono small">{pi_id}</a>'
    if names:
        host += f'<div class="small muted">{names}</div>'
    contact = str(reltime(row.host.last_contact_at))
    parts = []
    for cell in row.cells:
        parts.append(
            f'<tr><td>{host}</td><td><a href="{escape(cell.url)}">'
            f"{escape(cell.model_key)}</a></td>"
            f"<td>{_verdict(cell.probe_status, cell.probe_grade)}</td>"
            f"<td>{_PROTOCOL.get(cell.protocol_status, _NO_PROTOCOL)}</td>"
            f'<td class="num">{cell.rule_count}</td>'
            f'<td class="num">{rate(cell.rate)}</td>'
            f'<td class="num">{qty(cell.failures)}</td><td>{contact}</td></tr>'
        )
    return mark_safe("".join(parts))  # noqa: S308 - every value escaped above
