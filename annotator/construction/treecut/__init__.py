"""TreeCut: answerable / unanswerable word-problem pairs from random trees, and an exact solvability check.

The generator follows Algorithms 1 and 2 of the TreeCut paper's Appendix A (Ouyang 2025): sample a price
for each variable (in [5, 15] for the food theme), build a tree whose path root -> x_1 -> ... -> x_ansDepth
ends at the questioned variable, attach the remaining variables to random nodes (the root included),
collect the edges breadth first, give each edge a linear formula (an edge from the root is a given price),
order the formulas (forward / backward / random) and render them with the Appendix A templates. Where the
reference generator is more specific it is followed: coefficient sign patterns (+,+), (+,-), (-,+) (the
paper's literal draw stays available, `coefficients="paper"`), composite names from two places and
ceil(numVars/2) items, its wording, and its outfit theme. The unanswerable counterpart is the same problem
without the formula of the edge (x_{ansDepth-cutDepth-1}, x_{ansDepth-cutDepth}).

The check does not trust the generator: it parses the problem text back into linear equations (every
template, simple and composite names) and walks the equation graph, writing each variable of a connected
component as an affine function `(P + Q t) / D` of one free parameter `t` with integer P, Q, D; every
equation that is not a tree edge pins `t` (or is redundant, or contradicts). The value of the questioned
variable is then a `fractions.Fraction`, or undetermined. The work is linear in the number of formulas.

Where each part lives:
- `themes`: the item names, places and prices of a theme (`THEMES`, `Theme`, `Name`, `get_theme`, `theme_names`,
  `sample_names`);
- `params`: the generation parameters (`Params`, `ORDERS`) and the file names that carry them (`parse_file_name`);
- `render`: one formula as a template sentence (`render_formula`, `ROOT`);
- `generate`: Algorithms 1 and 2 (`Pair`, `generate_pair`, `generate_pairs`, `COEFFICIENT_MODES`);
- `parse`: problem text -> linear equations (`parse_sentence`, `split_problem`, `parse_problem`, `Equation`);
- `check`: the exact check (`solve`, `check_problem`, `Verdict`, `answer_agrees`, `unsolvable_reason`);
- `files`: the two JSONL files of generated pairs and the seed beside them (`write_pairs`, `generation_file`).
Reading TreeCut files into the database is `annotator.import_export.formats.treecut`, not this package.
"""

from __future__ import annotations

from annotator.construction.treecut.check import (
    Verdict,
    answer_agrees,
    check_problem,
    format_value,
    solve,
    unsolvable_reason,
)
from annotator.construction.treecut.files import generation_file, write_pairs
from annotator.construction.treecut.generate import (
    COEFFICIENT_MODES,
    COEFFICIENTS,
    MAX_VALUE,
    MIN_VALUE,
    Pair,
    generate_pair,
    generate_pairs,
)
from annotator.construction.treecut.params import FILE_NAME_RE, ORDERS, Params, parse_file_name
from annotator.construction.treecut.parse import (
    Equation,
    ParsedProblem,
    TreeCutParseError,
    parse_problem,
    parse_sentence,
    split_problem,
)
from annotator.construction.treecut.render import ROOT, render_formula
from annotator.construction.treecut.themes import THEMES, Name, Theme, get_theme, sample_names, theme_names

__all__ = [
    "COEFFICIENT_MODES",
    "COEFFICIENTS",
    "FILE_NAME_RE",
    "MAX_VALUE",
    "MIN_VALUE",
    "ORDERS",
    "ROOT",
    "THEMES",
    "Equation",
    "Name",
    "Pair",
    "Params",
    "ParsedProblem",
    "Theme",
    "TreeCutParseError",
    "Verdict",
    "answer_agrees",
    "check_problem",
    "format_value",
    "generate_pair",
    "generate_pairs",
    "generation_file",
    "get_theme",
    "parse_file_name",
    "parse_problem",
    "parse_sentence",
    "render_formula",
    "sample_names",
    "solve",
    "split_problem",
    "theme_names",
    "unsolvable_reason",
    "write_pairs",
]
