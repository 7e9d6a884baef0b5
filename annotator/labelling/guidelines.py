"""The human-check guidelines annotators see next to each candidate (Markdown written by us, not dataset text).

`remove` / `contradict` candidates follow ReliableMath, Appendix G.3 ("Principle of Evaluation"), with
criterion 2 as Section 3.3's Step 3 asks: the two criteria of Step 2, exactly one condition changed (the
others not) and unsolvable. `distractor` candidates (GSM-IC style: an irrelevant sentence added) are checked
the other way round: the rewrite must leave the answer unchanged and the problem unambiguous. UMWP
candidates (Sun et al. 2024) have no `rewritten_condition`; each of the five categories of UMWP's Table 1
gets its own check (`UMWP_CHECKS`).
"""

from __future__ import annotations

from typing import Any

from annotator.database.vocabulary import BACK_KEY, LABELS, SKIP_KEY, SOLVABLE_BY_DESIGN


def keys_line(rewrite_type: str | None = None) -> str:
    """The keys and what each label means for this rewrite type, e.g. "`2` unsolvable · hard"."""
    keys = [f"`{label.key}` {label.name(rewrite_type)}" for label in LABELS]
    return "**Keys:** " + " · ".join([*keys, f"`{SKIP_KEY}` skip", f"`{BACK_KEY}` back"]) + "."

RELIABLEMATH_G3 = """
You see the original question and its answer (`ground_truth`), the rewritten question, the changed
condition (`rewritten_condition`) and the model's `unsolvable_reason`. Decide whether the rewritten
question is a genuinely **unsolvable** math problem (ReliableMath, Appendix G.3).

**human_check** — it is 1 only if all three hold, otherwise 0:

1. **Still a math problem.** If too many prerequisites of the original question were removed, or
   unreasonable conditions were added, so that it no longer meets the definition of a mathematical
   problem, the score is 0.
2. **Exactly one condition changed, the others did not.** Using `rewritten_condition` (the altered part),
   check that the rewritten question removed (for `remove`) or contradicted (for `contradict`) exactly one
   condition of the original question and kept every other condition as it was. If no condition was
   changed, more than one was, or another condition was altered too, the score is 0.
3. **Really unsolvable.** Using `unsolvable_reason`, the original question and its answer, decide whether
   the rewritten question is indeed unsolvable. If it is still solvable, the score is 0; otherwise 1.
   You do not have to solve the problem: judge from the `unsolvable_reason` and the original solution.
   For example, if a question asks for a maximum and the rewritten answer is positive infinity, it is
   still solvable; if it asks for the maximum *real-number* solution, it is unsolvable.

**difficulty_eval** — only when human_check is 1: how hard is it to see that the question is unsolvable?
Use the `unsolvable_reason` to judge.

- **0, simple:** the reason is simple and shallow, e.g. a problem with $\\log(x)$ and the added
  contradictory condition $x = 0$, or a geometric figure that plainly does not match the question.
- **1, hard:** it takes some reasoning to see that the question is unsolvable, e.g. a constraint was
  removed and it takes the annotator several minutes of thinking to be sure.
"""

DISTRACTOR = """
A **distractor** candidate adds an irrelevant sentence to a solvable problem (GSM-IC style). It is
acceptable when the added information changes nothing about how the problem is solved.

**human_check** — it is 1 only if all hold, otherwise 0:

1. **The answer is unchanged.** The rewritten question still has exactly the original answer
   (`ground_truth`); the added sentence does not alter, remove or contradict any condition that is needed.
2. **The problem is unambiguous.** The added sentence does not make the question ambiguous, e.g. by being
   about the same person or quantity the question asks about so that a careful reader could reasonably
   include it.
3. **Still a well-formed math problem**, and the added sentence is really new (something was added).

**difficulty_eval** — only when human_check is 1: how tempting is the distractor?

- **0, simple:** clearly off-topic (another person, an unrelated quantity); hardly anyone would use it.
- **1, hard:** plausibly relevant (same role or units, a number that fits the computation); it takes a
  moment of thought to see that it must be ignored.
"""


UMWP_INTRO = """
A **UMWP** candidate (Sun et al. 2024) is an unanswerable variant of the original question on the left, of
the category named below (UMWP's Table 1). It has no `rewritten_condition`: compare the two questions.

**human_check** — it is 1 only if all three hold, otherwise 0:

1. **Still a math word problem** built on the original question.
2. **{title}.** {check}
3. **Really unanswerable.** No reasonable reading of the question gives one answer; if it can still be
   answered (e.g. the vague quantity does not matter), the score is 0.

**difficulty_eval** — only when human_check is 1: **0, simple** if the defect is plain at a glance;
**1, hard** if it takes some reasoning to see that the question cannot be answered.
"""

# UMWP's Table 1: each category's definition, as the check its candidates need (criterion 2).
UMWP_CHECKS = {
    1: ("Key information is missing",
        "A quantity or condition that the answer needs is not given (Table 1: the points of Eric are never "
        "stated). If everything needed is still there, the score is 0."),
    2: ("Key information is ambiguous",
        "A key quantity is given vaguely (\"some\", \"more than 20\", \"a few\") so that it admits several "
        "values and the answer depends on which. If the vague wording does not affect the answer, the score is 0."),
    3: ("A condition is unrealistic",
        "A condition is impossible in reality or degenerate (a triangle 0 inches high, a machine producing "
        "\"every 0 minutes\"), so no meaningful answer exists. If the condition is merely unusual, the score is 0."),
    4: ("The question asks about an unrelated object",
        "The question asks about an object or person the conditions never mention (oranges are bought, the "
        "profit on each apple is asked). If the asked object is the one described, the score is 0."),
    5: ("The question is missing",
        "No complete question is asked (\"How many?\" with nothing to count named), so there is nothing "
        "definite to answer. If the question still says what to find, the score is 0."),
}


def guideline_for(rewrite_type: str, *, umwp_category: int | None = None) -> str:
    """The guideline (Markdown) for a candidate of this rewrite type; `umwp_category` (1-5) for a UMWP one."""
    if umwp_category in UMWP_CHECKS:
        title, check = UMWP_CHECKS[umwp_category]
        body = UMWP_INTRO.format(title=title, check=check)
    else:
        body = DISTRACTOR if rewrite_type in SOLVABLE_BY_DESIGN else RELIABLEMATH_G3
    return body.strip() + "\n\n" + keys_line(rewrite_type)


def umwp_category(extra: dict[str, Any] | None) -> int | None:
    """The UMWP category of a candidate imported from UMWP (kept in its `extra`), else None."""
    category = (((extra or {}).get("umwp") or {}).get("fields") or {}).get("category")
    return category if isinstance(category, int) and not isinstance(category, bool) else None
