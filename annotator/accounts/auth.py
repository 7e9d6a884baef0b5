"""Accounts (people who sign in, and system annotators for imports and pipelines), passwords, sign-ins.

"Sign-in" is a signed-in browser; "session" in this code base always means a database session.
Passwords are stored as Argon2id hashes (argon2-cffi). A sign-in creates a random token: the browser keeps
the token (the app puts it in a cookie), the database keeps only its SHA-256, so a copy of the database
cannot be used to sign in. A sign-in lasts `sign_in_lifetime()` (env `ANNOTATOR_SESSION_HOURS`, default 12
hours) and ends when the account is disabled. Passwords follow `annotator.accounts.passwords`' rule; failed sign-ins
slow guessing down without letting a stranger lock an account (`annotator.accounts.throttle`; `unlock`). Every write a
page makes first checks, in its own transaction, that the account is still active and its role may do what it
writes (`check_writer`, with a `policies.Capability`): a disabled account writes nothing from the moment it is
disabled.

An account may also sign in through the team's identity provider (OpenID Connect): an admin gives it the e-mail
address or the subject (`sub`) the provider names the person by (`create_user(..., oidc_email=...)`), and
`sign_in_identity` turns what the provider vouched for into a sign-in like a password's (the same token, the same
re-checks). An identity no account has is refused, never made into an account.
"""

from __future__ import annotations

import functools
import hashlib
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Engine, delete, or_, select, update
from sqlmodel import Session

from annotator.accounts import passwords, policies, throttle
from annotator.accounts.policies import Capability
from annotator.database import names
from annotator.database.engine import DatabaseBusy, page_busy_seconds, read_session, write_session
from annotator.database.models import Annotator, SignInSession, utcnow
from annotator.database.vocabulary import Role

DEFAULT_SIGN_IN_HOURS = 12.0
# How often a signed-in browser re-checks its token (expired? account disabled?), not on every rerun.
DEFAULT_SIGN_IN_RECHECK_SECONDS = 60.0
ROLES = tuple(role.value for role in Role)
_hasher = PasswordHasher()


@functools.cache
def _dummy_hash() -> str:
    """Verified against when the name is unknown, so a wrong name costs as much time as a wrong password
    (made on first use: hashing is slow on purpose, and most commands never need it)."""
    return _hasher.hash("not a password")


class AuthError(ValueError):
    """A bad account operation: unknown or duplicate name, unknown role, a password the rule refuses."""


class IdentityRefused(AuthError):
    """The identity provider's sign-in does not sign anyone in. `reason`: "unknown" (no account has the identity:
    an admin must add it), "disabled" (its account is), "expired" (the provider's sign-in is older than
    `sign_in_lifetime()`: sign in there again). `identity` is the e-mail address, else the subject, for messages."""

    def __init__(self, message: str, *, identity: str, reason: str) -> None:
        super().__init__(message)
        self.identity = identity
        self.reason = reason


class AccountDisabled(PermissionError):
    """The account was disabled (or lost the role) since it signed in: the write was refused, nothing stored."""


@dataclass(frozen=True)
class User:
    """The signed-in annotator, as pages see it."""

    id: int
    name: str
    role: str


def allows(user: User | None, capability: Capability) -> bool:
    """Whether `user` is signed in with a role that may do `capability` (`policies.allows`)."""
    return policies.allows(user, capability)


def sign_in_lifetime() -> timedelta:
    hours = float(os.environ.get("ANNOTATOR_SESSION_HOURS") or DEFAULT_SIGN_IN_HOURS)
    return timedelta(hours=hours)


def sign_in_recheck_seconds() -> float:
    """How soon an open page notices that its sign-in ended or its account was disabled."""
    return float(os.environ.get("ANNOTATOR_SESSION_RECHECK_SECONDS") or DEFAULT_SIGN_IN_RECHECK_SECONDS)


def hash_password(password: str) -> str:
    if not password:
        raise AuthError("the password must not be empty")
    return _hasher.hash(password)


def _new_password_hash(password: str, *, name: str) -> str:
    """The hash of a password being set (a new account, a change), after `passwords.check`."""
    try:
        passwords.check(password, name=name)
    except passwords.PasswordRejected as exc:
        raise AuthError(str(exc)) from None
    return hash_password(password)


def check_writer(session: Session, *, user_id: int, capability: Capability) -> None:
    """Raise `AccountDisabled` unless the account is active and its role may do `capability` now. One primary-key
    read, made inside the write's own transaction, so a disable committed before it is always seen."""
    row = session.execute(select(Annotator.is_active, Annotator.role).where(Annotator.id == user_id)).first()
    if row is None or not row.is_active:
        raise AccountDisabled("your account has been disabled; nothing was saved")
    if not policies.allows(row.role, capability):
        raise AccountDisabled(f"your role is now {row.role}; nothing was saved")


def _user(annotator: Annotator) -> User:
    assert annotator.id is not None
    return User(id=annotator.id, name=annotator.name, role=annotator.role)


def _check_name_and_role(name: str, role: str) -> str:
    name = name.strip()
    if not name:
        raise AuthError("the name must not be empty")
    if (why := names.problem(name)) is not None:
        raise AuthError(f"the name {names.shown(name)} {why}")
    if ":" in name:
        raise AuthError(f"names with ':' are reserved for imports and pipelines: {name!r}")
    if role not in ROLES:
        raise AuthError(f"unknown role {role!r}; choose one of {', '.join(ROLES)}")
    return name


def has_accounts(session: Session) -> bool:
    """Whether anyone can sign in (a person with a password or an identity at the provider, not an import's
    pseudo-annotator)."""
    can_sign_in = or_(
        Annotator.password_hash.is_not(None), Annotator.oidc_email.is_not(None), Annotator.oidc_subject.is_not(None)
    )
    query = select(Annotator.id).where(Annotator.is_system.is_(False), can_sign_in).limit(1)
    return session.execute(query).first() is not None


def normalise_email(email: str) -> str:
    """An e-mail address as accounts keep it: without surrounding space, lower-case (addresses are compared
    without case: providers and people write them either way)."""
    email = email.strip().lower()
    local, at, domain = email.partition("@")
    if not (local and at and domain) or any(c.isspace() for c in email):
        raise AuthError(f"not an e-mail address: {email!r}")
    return email


def _check_identity(session: Session, *, oidc_email: str | None, oidc_subject: str | None) -> tuple[str | None, ...]:
    """The identity as stored (e-mail lower-case, subject as given); refused if another account has it."""
    email = normalise_email(oidc_email) if oidc_email is not None else None
    subject = oidc_subject.strip() if oidc_subject is not None else None
    if subject == "":
        raise AuthError("the subject must not be empty")
    for column, value in ((Annotator.oidc_email, email), (Annotator.oidc_subject, subject)):
        if value is not None:
            holder = session.execute(select(Annotator.name).where(column == value)).scalar_one_or_none()
            if holder is not None:
                raise AuthError(f"{holder!r} already signs in as {value!r}")
    return email, subject


def create_user(
    session: Session,
    *,
    name: str,
    role: str,
    password: str | None = None,
    oidc_email: str | None = None,
    oidc_subject: str | None = None,
) -> User:
    """Add an account that signs in with a password, through the identity provider (as `oidc_email` or
    `oidc_subject`), or both. A system annotator of the same name (from an import) is not an account: refused."""
    name = _check_name_and_role(name, role)
    if session.execute(select(Annotator.id).where(Annotator.name == name)).first() is not None:
        raise AuthError(f"an annotator called {name!r} already exists")
    email, subject = _check_identity(session, oidc_email=oidc_email, oidc_subject=oidc_subject)
    if password is None and email is None and subject is None:
        raise AuthError("an account needs a password or an identity at the identity provider")
    password_hash = None if password is None else _new_password_hash(password, name=name)
    annotator = Annotator(name=name, role=role, password_hash=password_hash, oidc_email=email,
                          oidc_subject=subject, is_system=False)
    session.add(annotator)
    session.flush()
    return _user(annotator)


def create_first_admin(session: Session, *, name: str, password: str) -> User:
    """The first account on a fresh database; refused once any account exists.

    Call inside `db.write_session()`: on SQLite that is `BEGIN IMMEDIATE`, so two browsers racing on the
    first-run form cannot both become admin.
    """
    if has_accounts(session):
        raise AuthError("the first admin already exists; sign in instead")
    return create_user(session, name=name, role=Role.admin, password=password)


def verify(session: Session, *, name: str, password: str) -> tuple[User, str | None] | None:
    """The user if `name` and `password` match an active account (else None, whatever was wrong), and a new
    hash of the password when the stored one uses outdated parameters. Reads only."""
    annotator = session.execute(select(Annotator).where(Annotator.name == name.strip())).scalar_one_or_none()
    usable = annotator is not None and annotator.is_active and not annotator.is_system and annotator.password_hash
    try:
        _hasher.verify(annotator.password_hash if usable else _dummy_hash(), password)  # type: ignore[union-attr,arg-type]
    except (VerificationError, InvalidHashError):
        return None
    if not usable:
        return None
    assert annotator is not None
    rehash = _hasher.hash(password) if _hasher.check_needs_rehash(annotator.password_hash) else None  # type: ignore[arg-type]
    return _user(annotator), rehash


def authenticate(session: Session, *, name: str, password: str) -> User | None:
    """`verify`, storing the new hash if there is one, in the caller's transaction."""
    found = verify(session, name=name, password=password)
    if found is None:
        return None
    user, rehash = found
    _store_rehash(session, user=user, rehash=rehash)
    return user


def sign_in(
    engine: Engine, *, name: str, password: str, client: str | None = None, now: datetime | None = None
) -> tuple[User, str] | None:
    """Check the password and start a sign-in: the user and the browser's token, or None.

    Raises `throttle.Throttled`, without checking the password, while this attempt must wait after repeated
    failures (`throttle`: of the account from this client, of the client, of the account from clients it does not
    know); a failure is counted against all three. Raises `DatabaseBusy` when the
    sign-in cannot be recorded within a page's busy timeout (an import holds the write lock).

    The password is verified outside any write transaction: Argon2 is slow on purpose, and on SQLite a write
    transaction holds the database's one write lock, so sixteen people signing in at once would queue behind
    each other's verifications. Only the short writes (a failure; the token, and a rehash) take the lock.
    """
    with read_session(engine) as session:
        throttle.check(session, name=name, client=client, now=now)
        found = verify(session, name=name, password=password)
    if found is None:
        _count_failure(engine, attempt_keys=throttle.keys(name=name, client=client), now=now)
        return None
    with write_session(engine, busy_seconds=page_busy_seconds()) as session:
        user, rehash = found
        throttle.signed_in(session, name=name, client=client, now=now)
        _store_rehash(session, user=user, rehash=rehash)
        return user, start_sign_in(session, user=user)


def _identity_account(session: Session, *, subject: str | None, email: str | None) -> Annotator | None:
    """The account given this subject, else the one given this e-mail address (a subject is the provider's own
    name for the person, an address can move between people)."""
    conditions = []
    if subject:
        conditions.append(Annotator.oidc_subject == subject)
    if email:
        conditions.append(Annotator.oidc_email == email.strip().lower())
    if not conditions:
        return None
    found = session.execute(select(Annotator).where(Annotator.is_system.is_(False), or_(*conditions))).scalars()
    return min(found, key=lambda annotator: annotator.oidc_subject != subject, default=None)


def _claim(claims: Mapping[str, object], key: str) -> str | None:
    value = claims.get(key)
    return value if isinstance(value, str) and value.strip() else None


def sign_in_identity(
    engine: Engine, *, claims: Mapping[str, object], now: datetime | None = None
) -> tuple[User, str]:
    """Start a sign-in for the account an identity provider's ID-token claims name: the user and the token.

    The account is found by the subject (`sub`) an admin gave it, else by the e-mail address (`email`, without
    case; not when the provider says `email_verified` is false). The sign-in ends `sign_in_lifetime()` after the
    provider's (`iat`), as a password's does after its own. Raises `IdentityRefused` (nothing is created) and
    `DatabaseBusy` as `sign_in` does.
    """
    subject = _claim(claims, "sub")
    email = _claim(claims, "email") if claims.get("email_verified") is not False else None
    identity = email or subject or "(no e-mail address or subject)"
    now = now or utcnow()
    issued = claims.get("iat")
    remaining = sign_in_lifetime()
    if isinstance(issued, int | float) and not isinstance(issued, bool):
        remaining -= now - datetime.fromtimestamp(issued, UTC)
    with write_session(engine, busy_seconds=page_busy_seconds()) as session:
        annotator = _identity_account(session, subject=subject, email=email)
        if annotator is None:
            raise IdentityRefused(f"no account signs in as {identity}; ask an admin to add {identity}",
                                  identity=identity, reason="unknown")
        if not annotator.is_active:
            raise IdentityRefused(f"the account {annotator.name} of {identity} is disabled; ask an admin",
                                  identity=identity, reason="disabled")
        if remaining <= timedelta(0):
            raise IdentityRefused(f"your sign-in as {identity} has ended; please sign in again",
                                  identity=identity, reason="expired")
        user = _user(annotator)
        return user, start_sign_in(session, user=user, lifetime=remaining)


def _count_failure(engine: Engine, *, attempt_keys: list[str], now: datetime | None) -> None:
    """Count a failed sign-in, waiting for the write lock no longer than a page's write: while an import holds
    it, the refusal is not delayed (a failure then goes uncounted; the attempt was refused all the same)."""
    try:
        with write_session(engine, busy_seconds=page_busy_seconds()) as session:
            throttle.record_failure(session, attempt_keys=attempt_keys, now=now)
    except DatabaseBusy:
        pass


def _store_rehash(session: Session, *, user: User, rehash: str | None) -> None:
    """Keep the password's new hash, if `verify` made one (the hasher's parameters changed)."""
    if rehash is not None:
        session.execute(update(Annotator).where(Annotator.id == user.id).values(password_hash=rehash))


def set_password(session: Session, *, name: str, password: str) -> None:
    """A new password: ends the account's sign-ins, forgets its failed ones and the clients it knew."""
    annotator = _account(session, name=name)
    annotator.password_hash = _new_password_hash(password, name=name)
    session.execute(delete(SignInSession).where(SignInSession.annotator_id == annotator.id))
    throttle.clear_account(session, name=name, forget_clients=True)
    session.flush()


def unlock(session: Session, *, name: str) -> None:
    """Forget the account's failed sign-ins, from every client, so that nobody waits for them."""
    throttle.clear_account(session, name=_account(session, name=name).name)


def _account(session: Session, *, name: str) -> Annotator:
    annotator = session.execute(
        select(Annotator).where(Annotator.name == name, Annotator.is_system.is_(False))
    ).scalar_one_or_none()
    if annotator is None:
        raise AuthError(f"no account called {name!r}")
    return annotator


def set_active(session: Session, *, name: str, active: bool) -> None:
    """Disable (or enable again) an account; disabling also ends its sign-in sessions, enabling forgets its
    failed sign-ins."""
    annotator = _account(session, name=name)
    annotator.is_active = active
    if not active:
        session.execute(delete(SignInSession).where(SignInSession.annotator_id == annotator.id))
    else:
        throttle.clear_account(session, name=name)
    session.flush()


def list_users(session: Session, *, include_system: bool = False) -> list[dict[str, object]]:
    query = select(Annotator.name, Annotator.role, Annotator.is_active, Annotator.is_system, Annotator.created_at,
                   Annotator.oidc_email, Annotator.oidc_subject)
    if not include_system:
        query = query.where(Annotator.is_system.is_(False))
    return [row._asdict() for row in session.execute(query.order_by(Annotator.name))]


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def start_sign_in(session: Session, *, user: User, lifetime: timedelta | None = None) -> str:
    """A new sign-in token for `user`; also drops this user's expired sign-ins."""
    now = utcnow()
    session.execute(
        delete(SignInSession).where(SignInSession.annotator_id == user.id, SignInSession.expires_at <= now)
    )
    token = secrets.token_hex(32)
    session.add(
        SignInSession(
            token_hash=_token_hash(token),
            annotator_id=user.id,
            created_at=now,
            expires_at=now + (lifetime or sign_in_lifetime()),
        )
    )
    session.flush()
    return token


def is_token(value: object) -> bool:
    """Whether `value` looks like a token `start_sign_in` made (so only such strings reach the page's script)."""
    return isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def user_for_token(session: Session, *, token: str | None, now: datetime | None = None) -> tuple[User, datetime] | None:
    """The user a token signs in and when its sign-in ends, or None if it is unknown, expired or disabled."""
    if not is_token(token):
        return None
    assert token is not None
    row = session.execute(
        select(Annotator, SignInSession.expires_at)
        .join(SignInSession, SignInSession.annotator_id == Annotator.id)
        .where(SignInSession.token_hash == _token_hash(token), SignInSession.expires_at > (now or utcnow()))
        .where(Annotator.is_active.is_(True))
    ).first()
    if row is None:
        return None
    return _user(row[0]), row[1]


def end_sign_in(session: Session, *, token: str | None) -> None:
    if is_token(token):
        assert token is not None
        session.execute(delete(SignInSession).where(SignInSession.token_hash == _token_hash(token)))


def account_id(session: Session, *, name: str) -> int | None:
    """The id of the person (not a system annotator) called `name`, enabled or not; None if there is none."""
    return session.execute(
        select(Annotator.id).where(Annotator.name == name, Annotator.is_system.is_(False))
    ).scalar_one_or_none()


def system_annotator_id(session: Session, *, name: str) -> int:
    """The id of the annotator called `name`; an unknown name becomes a system annotator (an import or a
    pipeline, e.g. "import:reliablemath"), which cannot sign in."""
    found = session.execute(select(Annotator.id).where(Annotator.name == name)).scalar_one_or_none()
    if found is not None:
        return found
    annotator = Annotator(name=name, role=Role.annotator, is_system=True)
    session.add(annotator)
    session.flush()
    assert annotator.id is not None
    return annotator.id
