"""What a role may do (`annotator.accounts.policies`): the one mapping, asked the one way."""

from __future__ import annotations

import pytest

from annotator.accounts import auth
from annotator.accounts.policies import Capability, allows, everyone_may, roles_with
from annotator.database.vocabulary import Role

MAY = {
    Role.annotator: {Capability.annotate},
    Role.reviewer: {Capability.annotate, Capability.review, Capability.adjudicate, Capability.see_everyones_labels,
                    Capability.audit},
    Role.admin: set(Capability),
}


@pytest.mark.parametrize("role", list(Role))
@pytest.mark.parametrize("capability", list(Capability))
def test_each_role_may_do_exactly_its_capabilities(role: Role, capability: Capability) -> None:
    user = auth.User(id=1, name="someone", role=role.value)
    assert allows(role, capability) is allows(role.value, capability) is allows(user, capability)
    assert allows(role, capability) is (capability in MAY[role])


@pytest.mark.parametrize("capability", list(Capability))
def test_nobody_signed_in_and_an_unknown_role_may_do_nothing(capability: Capability) -> None:
    assert not allows(None, capability)
    assert not allows("superuser", capability)
    assert not allows(auth.User(id=1, name="x", role="Admin"), capability)


def test_who_may_is_said_in_role_order() -> None:
    assert roles_with(Capability.adjudicate) == (Role.reviewer, Role.admin)
    assert roles_with(Capability.administer) == (Role.admin,)
    assert everyone_may(Capability.annotate) and not everyone_may(Capability.review)


def test_capabilities_are_the_users_words() -> None:
    assert [c.value for c in Capability] == ["annotate", "review", "adjudicate", "administer", "see everyone's labels",
                                                 "audit"]
