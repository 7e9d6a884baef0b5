"""The human-check guidelines annotators see next to each candidate (Markdown written by us, not dataset text).

`remove` / `contradict` candidates follow ReliableMath, Appendix G.3 ("Principle of Evaluation").
`distractor` candidates (GSM-IC style: an irrelevant sentence added) are checked the other way round:
the rewrite must leave the answer unchanged and the problem unambiguous.
"""

from __future__ import annotations

from annotator.vocabulary import BACK_KEY, LABELS, SKIP_KEY, SOLVABLE_BY_DESIGN


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
2. **The condition really changed.** Using `rewritten_condition` (the altered part), check that the
   rewritten question changed a condition of the original question. If it does not meet the rewriting
   requirement (e.g. no condition was removed or added), the score is 0.
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


def guideline_for(rewrite_type: str) -> str:
    """The guideline (Markdown) for a candidate of this rewrite type."""
    body = DISTRACTOR if rewrite_type in SOLVABLE_BY_DESIGN else RELIABLEMATH_G3
    return body.strip() + "\n\n" + keys_line(rewrite_type)
