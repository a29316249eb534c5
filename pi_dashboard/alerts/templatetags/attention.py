"""`{% attention_now %}`: the overview's "needs attention now" header."""

from typing import Any

from django import template

from pi_dashboard.alerts import selectors
from pi_dashboard.alerts.templatetags.liveness import policy_of

register = template.Library()


@register.inclusion_tag("alerts/_attention.html", takes_context=True)
def attention_now(context: template.Context) -> dict[str, Any]:
    # The same grace overrides as the matrix's badges: read once per page.
    return {"attention": selectors.attention_now(policy_of(context))}
