"""Runs app.py for `AppTest`.

AppTest treats an app whose folder has a `pages/` directory as a v1 multipage app on every run and then
runs the last page without app.py; started from here (no `pages/` next to it) app.py's `st.navigation` is
used as in `streamlit run app.py`.
"""

import runpy
from pathlib import Path

runpy.run_path(str(Path(__file__).resolve().parents[2] / "app.py"), run_name="__main__")
