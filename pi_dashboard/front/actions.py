"""Operator actions: one POST each, calling one control service.

A GET of the same URL (with the form's fields in the query string) is the plain
confirmation page: the dialog's exact text and one POST button, so actions work
without JavaScript; with JavaScript the button opens that text as a dialog.

htmx posts get a fragment with each created command's live status (the control app's
`control/_command_status.html`, which polls until the command is final) and an
`HX-Trigger: fleet-changed` event, on which the page's rules, calibration and command
lists reload themselves; plain form posts are redirected back to the page with a
message. A refused action (DomainError) shows the service's message; the service has
already audited it.
"""

from collections.abc import Callable
from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from pi_dashboard.accounts.models import Role
from pi_dashboard.accounts.roles import role_required
from pi_dashboard.audit import audit
from pi_dashboard.control import services
from pi_dashboard.control.models import Command
from pi_dashboard.fleet.models import Host, HostModel, Model
from pi_dashboard.front.pages import action_specs as specs
from pi_dashboard.front.pages.detail import hostnames_by_host, hosts_with_rule
from pi_dashboard.lib.errors import DomainError
from pi_dashboard.lib.htmx import is_htmx

# Sent with every successful htmx action; the pages' live sections listen for it.
CHANGED_EVENT = "fleet-changed"


class HostModelActionForm(forms.Form):
    host = forms.CharField(max_length=200)
    model = forms.CharField(max_length=600)
    mode = forms.CharField(max_length=200, required=False)
    # remove-rule: also forget the teach stats; reset-protocol: probe again after.
    also = forms.BooleanField(required=False)


# pi's model key: `provider/modelId` (the id may hold more slashes, e.g. openrouter's).
MODEL_KEY = r"^[^/\s]{1,200}/\S+$"


class ProbeModelForm(forms.Form):
    host = forms.CharField(max_length=200)
    model = forms.RegexField(
        regex=MODEL_KEY,
        max_length=600,
        error_messages={
            "invalid": "Name the model as pi does, provider/modelId "
            "(e.g. ollama/qwen3-coder:30b).",
            "required": "Which model? Name it as provider/modelId.",
        },
    )


class ModelActionForm(forms.Form):
    model = forms.CharField(max_length=600)
    mode = forms.CharField(max_length=200)


Service = Callable[[User, HostModel, forms.Form], list[Command]]
SpecFor = Callable[[HostModel, list[str], forms.Form], specs.ActionSpec | None]


def bad_request(form: forms.Form) -> HttpResponse:
    return HttpResponse(
        f"Bad request: {form.errors.as_text()}", status=400, content_type="text/plain"
    )


def confirm_page(
    request: HttpRequest, spec: specs.ActionSpec | None, back: str
) -> HttpResponse:
    if spec is None:
        return HttpResponse(
            "Bad request: this action needs more fields (which rule?).",
            status=400,
            content_type="text/plain",
        )
    return render(request, "fleet/action_confirm.html", {"spec": spec, "back": back})


def run_action(
    request: HttpRequest,
    *,
    form: forms.Form,
    back: str,
    call: Callable[[], list[Command]],
) -> HttpResponse:
    """Call the service; answer with the commands' live status, or the refusal."""
    try:
        commands = call()
    except DomainError as error:
        if is_htmx(request):
            return render(request, "fleet/_action_result.html", {"error": error.detail})
        messages.error(request, error.detail)
        return redirect(back)
    if is_htmx(request):
        response = render(request, "fleet/_action_result.html", {"commands": commands})
        response["HX-Trigger"] = CHANGED_EVENT
        return response
    messages.success(
        request,
        f"Sent {len(commands)} command{'s' if len(commands) != 1 else ''}: "
        + ", ".join(f"{c.get_kind_display()} on {c.host.pi_id}" for c in commands),
    )
    return redirect(back)


def host_model_action(
    request: HttpRequest, service: Service, spec_for: SpecFor
) -> HttpResponse:
    """POST: run the action. GET: its confirmation page."""
    form = HostModelActionForm(
        request.POST if request.method == "POST" else request.GET
    )
    if not form.is_valid():
        return bad_request(form)
    hm = get_object_or_404(
        HostModel.objects.select_related("host", "model"),
        host__pi_id=form.cleaned_data["host"],
        model__key=form.cleaned_data["model"],
    )
    back = reverse("fleet:host_model", args=[hm.host.pi_id, hm.model.key])
    if request.method == "GET":
        names = hostnames_by_host([hm.host_id]).get(hm.host_id, [])
        return confirm_page(request, spec_for(hm, names, form), back)
    user = request.user
    assert isinstance(user, User)
    return run_action(
        request, form=form, back=back, call=lambda: service(user, hm, form)
    )


def pick(choices: list[specs.ActionSpec], form: forms.Form) -> specs.ActionSpec:
    """The plain action, or its "also" variant (forget / re-probe)."""
    return choices[1 if form.cleaned_data["also"] else 0]


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def remove_rule(request: HttpRequest) -> HttpResponse:
    def call(user: User, hm: HostModel, form: forms.Form) -> list[Command]:
        mode = form.cleaned_data["mode"]
        if not mode:
            raise DomainError("Which rule? The repair mode is missing.")
        return services.action_remove_rule(
            actor=user,
            host_model=hm,
            mode=mode,
            forget=form.cleaned_data["also"],
            ip_address=audit.client_ip(request),
        )

    def spec(hm: HostModel, names: list[str], form: forms.Form) -> Any:
        mode = form.cleaned_data["mode"]
        return pick(specs.remove_rule_specs(hm, mode, names), form) if mode else None

    return host_model_action(request, call, spec)


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def reset_protocol(request: HttpRequest) -> HttpResponse:
    def call(user: User, hm: HostModel, form: forms.Form) -> list[Command]:
        return services.action_reset_protocol(
            actor=user,
            host_model=hm,
            reprobe=form.cleaned_data["also"],
            ip_address=audit.client_ip(request),
        )

    def spec(hm: HostModel, names: list[str], form: forms.Form) -> Any:
        return pick(specs.reset_protocol_specs(hm, names), form)

    return host_model_action(request, call, spec)


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def probe(request: HttpRequest) -> HttpResponse:
    def call(user: User, hm: HostModel, form: forms.Form) -> list[Command]:
        return services.action_probe_on_host(
            actor=user, host_model=hm, ip_address=audit.client_ip(request)
        )

    def spec(hm: HostModel, names: list[str], form: forms.Form) -> Any:
        return specs.probe_spec(hm, names)

    return host_model_action(request, call, spec)


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def probe_model(request: HttpRequest) -> HttpResponse:
    """Probe a model named on the host page, stored on the host or not (13.5)."""
    form = ProbeModelForm(request.POST if request.method == "POST" else request.GET)
    if not form.is_valid():
        return bad_request(form)
    host = get_object_or_404(Host, pi_id=form.cleaned_data["host"])
    key = form.cleaned_data["model"]
    back = reverse("fleet:host", args=[host.pi_id])
    if request.method == "GET":
        names = hostnames_by_host([host.pk]).get(host.pk, [])
        return confirm_page(request, specs.probe_model_spec(host, key, names), back)
    user = request.user
    assert isinstance(user, User)
    return run_action(
        request,
        form=form,
        back=back,
        call=lambda: services.action_probe_model(
            actor=user, host=host, model_key=key, ip_address=audit.client_ip(request)
        ),
    )


@require_http_methods(["GET", "POST"])
@role_required(Role.OPERATOR)
def remove_rule_everywhere(request: HttpRequest) -> HttpResponse:
    form = ModelActionForm(request.POST if request.method == "POST" else request.GET)
    if not form.is_valid():
        return bad_request(form)
    model = get_object_or_404(Model, key=form.cleaned_data["model"])
    if request.method == "GET":
        mode = form.cleaned_data["mode"]
        spec = specs.remove_everywhere_spec(model, mode, hosts_with_rule(model, mode))
        return confirm_page(request, spec, reverse("fleet:model", args=[model.key]))
    user = request.user
    assert isinstance(user, User)
    return run_action(
        request,
        form=form,
        back=reverse("fleet:model", args=[model.key]),
        call=lambda: services.action_remove_rule_everywhere(
            actor=user,
            model=model,
            mode=form.cleaned_data["mode"],
            ip_address=audit.client_ip(request),
        ),
    )
