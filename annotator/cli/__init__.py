"""`python -m annotator ...`: everything the app does, from the command line.

Each command group lives in its own module and registers itself on `app`.
"""

from __future__ import annotations

from annotator.cli import (
    audit,  # noqa: F401  (registers audit draw/status/decide)
    data,  # noqa: F401  (registers init, import, export, stats)
    evaluate,  # noqa: F401  (registers evaluate)
    generate,  # noqa: F401  (registers generate)
    judging,  # noqa: F401  (registers judge, report)
    settings,  # noqa: F401  (registers settings)
    sources,  # noqa: F401  (registers treecut, distract)
    team,  # noqa: F401  (registers agreement)
    users,  # noqa: F401  (registers user add/list/disable/enable/password)
    webapp,  # noqa: F401  (registers app: the web app)
    workers,  # noqa: F401  (registers worker, runs)
)
from annotator.cli._app import app, main

__all__ = ["app", "main"]
