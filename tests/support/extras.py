"""An install without an optional extra, for a child process, without uninstalling anything from the machine:
a `sitecustomize` in a folder put first on PYTHONPATH puts a finder before all others that refuses the extra's
module, as Python does for a module that is not installed (`find_spec` and `import` raise ModuleNotFoundError)."""

from __future__ import annotations

import os
from pathlib import Path

_SITECUSTOMIZE = '''\
import sys


class _NotInstalled:
    """{module} and its submodules cannot be found, as on an install without the extra."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == {module!r} or name.startswith({module!r} + "."):
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''


def without_module(module: str, folder: Path) -> dict[str, str]:
    """The environment (this one's, changed) of a child process in which `import MODULE` fails; the folder
    receives the `sitecustomize.py` that makes it so."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE.format(module=module), encoding="utf-8")
    paths = [str(folder), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
