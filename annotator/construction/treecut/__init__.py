"""TreeCut: answerable / unanswerable word-problem pairs from random trees, and an exact solvability check.

The generator follows Algorithms 1 and 2 of the TreeCut paper's Appendix A (Ouyang 2025): a tree of linear
formulas over priced variables whose path from the root ends at the questioned variable, rendered with the
Appendix A templates; where the reference generator is more specific (coefficient signs, composite names, its
wording and outfit theme) it is followed, the paper's literal draw kept as `coefficients="paper"`. The
unanswerable counterpart is the same problem without the formula of one edge on that path (`cutDepth`).

The check does not trust the generator: it parses the problem text back into linear equations and solves them
exactly, each connected component's variables as affine functions of one free parameter with integer
coefficients, so the questioned variable is a `fractions.Fraction` or undetermined, in time linear in the formulas.

Modules: `themes` (names, places, prices), `params` (generation parameters and the file names carrying them),
`render` (a formula as a sentence), `generate` (`generate_pairs`), `parse` (text -> equations), `check`
(`check_problem`, `solve`), `files` (`write_pairs`). Reading TreeCut files into the database is
`annotator.import_export.formats.treecut`.
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
