"""The construction prompts as versioned, editable template files (`prompts/<version>/*.txt`)."""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from annotator.database.vocabulary import RewriteType
from annotator.runs.lifecycle import RunError

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
DEFAULT_VERSION = "v1"
# The rewrite types the construction prompts make (ReliableMath Step 1).
REWRITE_TYPES = (RewriteType.remove, RewriteType.contradict)
PROMPT_NAMES = ("extract",) + tuple(
    f"{step}_{kind}" for step in ("rewrite", "verify", "condition", "unsolvable", "reason") for kind in REWRITE_TYPES
)
_PLACEHOLDER = re.compile(
    r"<(original_math_question|original_answer|extracted_condition|rewritten_math_question|analysis)>"
)


class PromptError(RunError):
    """A prompt version is missing or incomplete: a run that asks for it cannot start."""


def available_versions() -> list[str]:
    return sorted(path.name for path in PROMPTS_DIR.iterdir() if path.is_dir() and (path / "extract.txt").exists())


@dataclass(frozen=True)
class PromptSet:
    version: str
    templates: dict[str, str]
    sha256: str  # over all template files, so an edited version is told apart from the original

    def render(self, name: str, **values: str) -> list[dict[str, str]]:
        """The chat messages for prompt `name` with the given placeholders filled in.

        Placeholders without a value stay as written (e.g. `<analysis>` marking where the model writes).
        One pass over the template, so a question that contains `<analysis>` is not substituted again.
        """
        parts = _parts(self.templates[name])
        text = "".join(values.get(part, f"<{part}>") if index % 2 else part for index, part in enumerate(parts))
        return [{"role": "user", "content": text}]


@functools.lru_cache(maxsize=64)
def _parts(template: str) -> tuple[str, ...]:
    """The template split once into literal text (even indexes) and placeholder names (odd indexes)."""
    return tuple(_PLACEHOLDER.split(template))


def load_prompts(version: str = DEFAULT_VERSION) -> PromptSet:
    folder = PROMPTS_DIR / version
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", version) or not folder.is_dir():
        raise PromptError(f"no prompt version {version!r} in {PROMPTS_DIR}; have {', '.join(available_versions())}")
    templates: dict[str, str] = {}
    digest = hashlib.sha256()
    for name in PROMPT_NAMES:
        path = folder / f"{name}.txt"
        if not path.exists():
            raise PromptError(f"{path}: missing (a prompt version needs {', '.join(PROMPT_NAMES)})")
        text = path.read_text(encoding="utf-8").rstrip("\n")
        templates[name] = text
        digest.update(name.encode() + b"\0" + text.encode("utf-8") + b"\0")
    return PromptSet(version=version, templates=templates, sha256=digest.hexdigest())
