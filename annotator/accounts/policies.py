"""What a role may do: the capabilities, in the users' words, the one mapping role -> capabilities, the check.

Everything that asks "may this person do that?" (a page's guard, a callback's write, the write's own check in
its transaction, what Browse shows) asks `allows(user_or_role, capability)`; no other module lists roles.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Protocol

from annotator.database.vocabulary import Role


class Capability(StrEnum):
    annotate = "annotate"
    review = "review"  # model transcripts: verdicts, tags, the report
    adjudicate = "adjudicate"
    administer = "administer"  # imports, exports, runs, settings, gold items, the demo project
    see_everyones_labels = "see everyone's labels"
    audit = "audit"  # draw a sample of the vetted candidates and re-check it


_STAFF = frozenset({Capability.annotate, Capability.review, Capability.adjudicate, Capability.see_everyones_labels,
                    Capability.audit})
CAPABILITIES: dict[Role, frozenset[Capability]] = {
    Role.annotator: frozenset({Capability.annotate}),
    Role.reviewer: _STAFF,
    Role.admin: frozenset(Capability),
}


class HasRole(Protocol):
    @property
    def role(self) -> str: ...


def allows(user_or_role: HasRole | str | None, capability: Capability) -> bool:
    """Whether a user (anything with a `role`) or a role may do `capability`; nobody signed in (None) may not.
    An unknown role may do nothing."""
    if user_or_role is None:
        return False
    role = user_or_role if isinstance(user_or_role, str) else user_or_role.role
    return capability in CAPABILITIES.get(role, frozenset())  # type: ignore[call-overload]  # a StrEnum key is its string


def roles_with(capability: Capability) -> tuple[Role, ...]:
    """The roles that may do `capability`, in `Role`'s order (for saying who may)."""
    return tuple(role for role in Role if capability in CAPABILITIES[role])


def everyone_may(capability: Capability) -> bool:
    """Whether every role may do `capability` (then only signing in is needed)."""
    return roles_with(capability) == tuple(Role)
