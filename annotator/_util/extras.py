"""Optional extras: features whose packages only an install with that extra has (`pip install -e ".[NAME]"`,
declared in `pyproject.toml`'s `[project.optional-dependencies]`).

A feature that needs one imports its packages inside the function that uses them and turns their ImportError
into `MissingExtra`: one line naming the extra and the command that installs it, which the command line and the
pages show as any other error the user can fix.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass


class MissingExtra(ValueError):
    """A feature used without its extra installed; the message is the one line to show."""


@dataclass(frozen=True)
class Extra:
    """An extra: its name in `pyproject.toml`, the top-level module it installs, and what it is for."""

    name: str
    module: str
    what: str

    def installed(self) -> bool:
        """Whether its module can be found: looked up, not imported (cheap enough for every run of a page)."""
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):  # a finder that refuses it, or a module entry that is None
            return False

    def missing(self, doing: str) -> MissingExtra:
        """The error for `doing` (e.g. "reading") its feature without it."""
        return MissingExtra(f'{doing} {self.what} needs the "{self.name}" extra: pip install -e ".[{self.name}]"')


INSPECT = Extra("inspect", "inspect_ai", "Inspect AI logs")
