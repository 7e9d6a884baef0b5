"""What a statement imports, seen from a fresh interpreter (start-up cost and layering tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent


def modules_loaded_by(statement: str, *prefixes: str) -> list[str]:
    """The modules whose names start with one of `prefixes` that running `statement` loads, sorted."""
    code = (
        f"import json, sys; {statement}; "
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({prefixes!r}))))"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, check=True)
    return json.loads(result.stdout)
