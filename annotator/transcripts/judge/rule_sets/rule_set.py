"""What a rule set module declares (`RULE_SET`): a `RuleSet`. Its modules import this, never the list
(`registry`), which names them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from annotator.database.vocabulary import JudgeClass

# math-verify's verdict on a response's answer against the ground truth: True, False, or None when undecided
# (out of time, too costly to evaluate); asked when first called, at most once per response for all rule sets.
Correct = Callable[[], "bool | None"]


@dataclass(frozen=True)
class RuleSet:
    """A rule set as its module declares it.

    Attributes:
        name: what `judge --rule` takes and each verdict stores (`judge_rule`).
        version: stored with each verdict (`judge_version`); bump it when the rule's behaviour changes.
        classify: the class of a response's last boxed answer, given `correct` (call it only when the class depends
            on it: math-verify is the costly part). A response that asked it and got None is counted as timed out.
            Responses without a boxed answer (`unmatched`) and TreeCut items are judged alike under every rule set
            (`annotator.transcripts.judge.rules`).
    """

    name: str
    version: str
    classify: Callable[[str, Correct], JudgeClass]
