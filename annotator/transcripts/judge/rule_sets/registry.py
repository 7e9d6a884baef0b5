"""The one list of the in-process judge's rule sets, in the order the command line, the report and its judges
table show them.

Each entry names a rule set (what `judge --rule` takes), the module that declares it (`RULE_SET`, a `RuleSet`)
and what it is in a few words. Nothing here loads a rule set: the command line builds its help from this list at
start-up, and a rule set's module is imported when transcripts are judged.

The reference rule (`REFERENCE_RULE`) judges imported transcripts and is `judge`'s default. Every transcript
stores whether its verdict differs from the reference rule's (`differs_from_reference`; judged by the reference
rule itself: whether another rule set's verdict differs), and the review queue shows those first.

To add a rule set: write its module in this package (`RULE_SET = RuleSet(name, version, classify)`, see
`rule_set` and `reliablemath`) and add one entry here.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from annotator.transcripts.judge.rule_sets.rule_set import RuleSet


@dataclass(frozen=True)
class Entry:
    """A rule set in the list: its name, the module declaring it (`RULE_SET`) and what it is in a few words."""

    name: str
    module: str
    description: str

    def load(self) -> RuleSet:
        declared: RuleSet = importlib.import_module(self.module).RULE_SET
        if declared.name != self.name:
            raise ValueError(f"rule set module {self.module} declares {declared.name!r}, its entry in "
                             f"RULE_SETS names {self.name!r}")
        return declared


RULE_SETS: tuple[Entry, ...] = (
    Entry("reliablemath", "annotator.transcripts.judge.rule_sets.reliablemath",
          "the phrases first, in any case and with either apostrophe"),
    Entry("reliablemath-exact", "annotator.transcripts.judge.rule_sets.reliablemath_exact",
          "the ReliableMath authors' code: math-verify first, the phrases as they write them"),
)
REFERENCE_RULE = "reliablemath"


def names() -> tuple[str, ...]:
    """Every rule set's name, in the list's order."""
    return tuple(entry.name for entry in RULE_SETS)


def load(name: str) -> RuleSet:
    """The rule set of this name; ValueError naming the choices otherwise."""
    entry = next((entry for entry in RULE_SETS if entry.name == name), None)
    if entry is None:
        raise ValueError(f"unknown judge rule {name!r}; choose one of {', '.join(names())}")
    return entry.load()
