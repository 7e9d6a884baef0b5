"""Which heavy packages importing a command module loads (a command starts fast when it loads none)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import PROJECT_ROOT

# Import the command module on its own (not the other commands of the package) and list what it added.
SCRIPT = f"""
import json, sys, types
package = types.ModuleType("annotator.cli")
package.__path__ = [{str(PROJECT_ROOT / "annotator" / "cli")!r}]
sys.modules["annotator.cli"] = package
import annotator.cli._app
before = set(sys.modules)
import annotator.cli.generate
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def heavy_imports(module: str, heavy: tuple[str, ...]) -> list[str]:
    """The modules of `heavy` packages that importing command module `module` on its own loads."""
    script = SCRIPT.replace("annotator.cli.generate", module)
    result = subprocess.run([sys.executable, "-c", script], cwd=PROJECT_ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    added = json.loads(result.stdout)
    assert module in added
    return [name for name in added if name.split(".")[0] in heavy or name.startswith(heavy)]


# What the evaluate and judge commands must not load as they start.
HEAVY = ("openai", "pandas", "tqdm", "sqlalchemy", "annotator.transcripts", "annotator.runs.llm", "annotator.runs")
