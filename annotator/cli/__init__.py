"""`python -m annotator ...`: everything the app does, from the command line.

Each command group lives in its own module and registers itself on `app`.
"""

from __future__ import annotations

from annotator.cli._app import app, main
from annotator.cli import data  # noqa: F401  (registers init, import, export, stats)

__all__ = ["app", "main"]
