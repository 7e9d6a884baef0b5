"""`annotator app`: start the web app, i.e. `streamlit run server.py` on the project's app (`app.py` served with
its sign-in cookie set by the server), the same as running that from the checkout (any further arguments go to
`streamlit run`, e.g. `annotator app --server.port 8502`)."""

from __future__ import annotations

import os
import sys

import typer

from annotator.cli._app import app, fail


@app.command(name="app", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def run_app(ctx: typer.Context) -> None:
    """Start the web app (`streamlit run server.py`); further arguments go to `streamlit run`."""
    from annotator.database.engine import PROJECT_ROOT, get_engine

    script = PROJECT_ROOT / "server.py"
    if not script.is_file():
        fail(f"the app is not at {script}: install the project from its checkout with `pip install -e .`")
    # A database that cannot be opened is one line here, not an error page in every browser; it also
    # creates or upgrades the schema before the server starts.
    get_engine().dispose()
    sys.stdout.flush()
    # Replaced by the server: Ctrl-C and signals reach it directly, its exit code is the command's.
    os.execv(sys.executable, [sys.executable, "-m", "streamlit", "run", str(script), *ctx.args])
