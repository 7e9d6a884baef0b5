"""The password rule (NIST SP 800-63B 3.1.1.2): at least `MIN_LENGTH` characters, and not a password everyone
tries first: one from the list of common passwords shipped beside this module, one character repeated, or the
account's own name (of 4 or more characters). Nothing else (no required mix of character kinds): length is what
makes a password strong.
"""

from __future__ import annotations

import functools
from pathlib import Path

MIN_LENGTH = 12
MAX_LENGTH = 1024  # Argon2 hashes any length; this bounds the work one sign-in attempt can ask for
NAME_MIN_LENGTH = 4  # names at least this long may not appear in their password
COMMON_PASSWORDS = Path(__file__).with_name("common_passwords.txt")


class PasswordRejected(ValueError):
    """A password the rule refuses; the message says why in one line, without echoing the password."""


@functools.cache
def _common() -> frozenset[str]:
    lines = COMMON_PASSWORDS.read_text(encoding="utf-8").splitlines()
    return frozenset(line.casefold() for line in lines if line and not line.startswith("# "))


def check(password: str, *, name: str = "") -> None:
    """Raise `PasswordRejected` unless `password` may be set for the account called `name`."""
    if len(password) < MIN_LENGTH:
        raise PasswordRejected(f"the password must have at least {MIN_LENGTH} characters (it has {len(password)})")
    if len(password) > MAX_LENGTH:
        raise PasswordRejected(f"the password must have at most {MAX_LENGTH} characters")
    folded = password.casefold()
    if folded in _common():
        raise PasswordRejected("that password is on the list of common passwords; choose another")
    if len(set(folded)) == 1:
        raise PasswordRejected("the password must not be one character repeated")
    # A name of a few letters is part of many good passwords; a longer one is the first guess of anyone.
    if len(name.strip()) >= NAME_MIN_LENGTH and name.strip().casefold() in folded:
        raise PasswordRejected("the password must not contain the account's name")
