"""Does a rule's, silence's or maintenance window's scope cover a subject?"""

from dataclasses import dataclass

from pi_dashboard.alerts.models import ScopeKind


@dataclass(frozen=True)
class Subject:
    host_pi_id: str
    host_tags: frozenset[str]
    model_key: str


def scope_covers(kind: str, value: str, subject: Subject) -> bool:
    if kind == ScopeKind.FLEET:
        return True
    if kind == ScopeKind.PROVIDER:
        return bool(subject.model_key) and subject.model_key.partition("/")[0] == value
    if kind == ScopeKind.MODEL:
        return subject.model_key == value
    if kind == ScopeKind.HOST:
        return subject.host_pi_id == value
    if kind == ScopeKind.TAG:
        return value in subject.host_tags
    return False
