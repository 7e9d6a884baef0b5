"""TreeCut generation parameters (the paper's numVars, ansDepth, cutDepth, order) and the file names that carry them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from annotator.construction.treecut.themes import get_theme, max_variables

ORDERS = ("forward", "backward", "random")


@dataclass(frozen=True)
class Params:
    """Generation parameters, with the paper's names in `as_dict` (numVars, ansDepth, ...)."""

    num_vars: int
    ans_depth: int
    cut_depth: int
    composite_name: bool = True
    order: str = "random"
    theme: str = "food"

    def __post_init__(self) -> None:
        if self.ans_depth < 2:
            raise ValueError(f"ansDepth must be at least 2, got {self.ans_depth}")
        if self.num_vars < self.ans_depth:
            raise ValueError(f"numVars ({self.num_vars}) must be at least ansDepth ({self.ans_depth})")
        if not 1 <= self.cut_depth < self.ans_depth:
            raise ValueError(f"cutDepth must satisfy 1 <= cutDepth < ansDepth ({self.ans_depth}), got {self.cut_depth}")
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {self.order!r}")
        theme = get_theme(self.theme)
        available = max_variables(theme, composite=self.composite_name)
        if self.num_vars > available:
            hint = "" if self.composite_name else "; composite names (--composite-name) give more"
            raise ValueError(
                f"theme {self.theme!r} has {available} item names, fewer than numVars {self.num_vars}{hint}"
            )

    def as_dict(self) -> dict[str, Any]:
        return {
            "theme": self.theme,
            "compositeName": self.composite_name,
            "numVars": self.num_vars,
            "ansDepth": self.ans_depth,
            "cutDepth": self.cut_depth,
            "order": self.order,
        }

    def file_name(self, *, unanswerable: bool, count: int) -> str:
        """The reference generator's file name, e.g. `qa_theme-food_compositeName_True_numVars-4_..._REP-500.jsonl`."""
        cut = f"_cutDepth-{self.cut_depth}" if unanswerable else ""
        return (
            f"qa_theme-{self.theme}_compositeName_{self.composite_name}_numVars-{self.num_vars}_ansDepth-{self.ans_depth}"
            f"_order-{self.order}_hallu-{unanswerable}{cut}_REP-{count}.jsonl"
        )


FILE_NAME_RE = re.compile(
    r"^qa_theme-(?P<theme>[^_]+)_compositeName_(?P<composite>True|False)_numVars-(?P<num_vars>\d+)"
    r"_ansDepth-(?P<ans_depth>\d+)_order-(?P<order>forward|backward|random)_hallu-(?P<hallu>True|False)"
    r"(?:_cutDepth-(?P<cut_depth>\d+))?_REP-(?P<count>\d+)\.jsonl$"
)


def parse_file_name(name: str) -> dict[str, Any] | None:
    """The parameters in a TreeCut file name, or None if it is not named like one."""
    match = FILE_NAME_RE.match(name)
    if not match:
        return None
    return {
        "theme": match["theme"],
        "compositeName": match["composite"] == "True",
        "numVars": int(match["num_vars"]),
        "ansDepth": int(match["ans_depth"]),
        "order": match["order"],
        "hallu": match["hallu"] == "True",
        "cutDepth": int(match["cut_depth"]) if match["cut_depth"] else None,
        "REP": int(match["count"]),
    }
