"""Adaptive overlap against fixed k on simulated teams: labels spent, and the share of wrong items (truly solvable
candidates) in the vetted set.

    python bench/bench_adaptive_overlap.py [--candidates 3000] [--unsolvable 0.7] [--threshold 0.95]
        [--max-labels 3] [--seed 0] [--teams mixed strong weak] [--thresholds 0.98 0.99]

In memory, seeded. Each team's annotators are right with their accuracy whatever the truth; each label comes from
an annotator of the team who has not labelled the candidate yet, drawn at random. Fixed k gives every candidate k
labels. Adaptive overlap asks for labels one at a time with the queue's own policy (`labelling.adaptive`:
`majority_posterior`, `needs_another_label`, `unsettled_dispute`) under a Dawid-Skene model refitted on the labels
so far as the app refits it (`REFIT_EVERY`; an annotator not yet fitted is taken as right `UNKNOWN_ACCURACY` of the
time). A candidate is vetted when its labels' majority says unsolvable (human_check = 1) and it is complete (k
labels; adaptive: settled or the most labels); a tie is a dispute, left out, and so is (adaptive) a candidate whose
most labels disagree and leave it unsettled. `--thresholds` adds adaptive rows at more thresholds. Goal: the wrong
share of fixed k = 2 with at least 35% fewer labels.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from annotator.figures.agreement import dawid_skene  # noqa: E402
from annotator.labelling import adaptive  # noqa: E402

TEAMS = {
    "mixed": (0.95, 0.90, 0.85, 0.75, 0.65),
    "strong": (0.97, 0.95, 0.93, 0.92, 0.90),
    "weak": (0.80, 0.75, 0.70, 0.65, 0.60),
}


@dataclass
class Outcome:
    policy: str
    labels: int = 0
    vetted: int = 0
    wrong: int = 0
    disputed: int = 0


def _label(rng: np.random.Generator, truth: int, right: float) -> int:
    return truth if rng.random() < right else 1 - truth


def _close(outcome: Outcome, given: list[int], truth: int) -> None:
    """Count a finished candidate: vetted when its majority says 1, a tie a dispute."""
    ones = sum(given)
    if 2 * ones == len(given):
        outcome.disputed += 1
    elif 2 * ones > len(given):
        outcome.vetted += 1
        outcome.wrong += int(truth == 0)


def fixed(truths: np.ndarray, team: tuple[float, ...], k: int, rng: np.random.Generator) -> Outcome:
    outcome = Outcome(f"fixed k = {k}")
    for truth in truths:
        who = rng.choice(len(team), size=k, replace=False)
        given = [_label(rng, int(truth), team[w]) for w in who]
        outcome.labels += k
        _close(outcome, given, int(truth))
    return outcome


class _Model:
    """The app's stored model: refitted on every label so far once enough came since the last fit."""

    def __init__(self, raters: int) -> None:
        self.prior: tuple[float, float] = (0.5, 0.5)
        self.confusion: dict[int, np.ndarray] = {}
        self.raters = raters
        self.items: list[int] = []
        self.who: list[int] = []
        self.said: list[int] = []
        self.fitted_at = 0

    def add(self, item: int, who: int, said: int) -> None:
        self.items.append(item)
        self.who.append(who)
        self.said.append(said)
        if len(self.said) - self.fitted_at >= max(adaptive.REFIT_EVERY, self.fitted_at // 10):
            fitted = dawid_skene.fit(dawid_skene.Labels.of(self.items, self.who, self.said))
            self.prior = (float(fitted.prior[0]), float(fitted.prior[1]))
            self.confusion = {int(w): fitted.confusion[r] for r, w in enumerate(fitted.labels.raters)}
            self.fitted_at = len(self.said)

    def of(self, who: int) -> np.ndarray:
        found = self.confusion.get(who)
        return adaptive.symmetric_confusion(adaptive.UNKNOWN_ACCURACY) if found is None else found


def adaptive_overlap(truths: np.ndarray, team: tuple[float, ...], *, threshold: float, max_labels: int,
                     rng: np.random.Generator) -> Outcome:
    outcome = Outcome(f"adaptive, {threshold:g}, at most {max_labels}")
    model = _Model(len(team))
    for item, truth in enumerate(truths):
        order = rng.permutation(len(team))
        who: list[int] = []
        given: list[int] = []
        posterior = 0.0
        while adaptive.needs_another_label(posterior, len(given), threshold=threshold, max_labels=max_labels):
            rater = int(order[len(given)])
            said = _label(rng, int(truth), team[rater])
            who.append(rater)
            given.append(said)
            model.add(item, rater, said)
            posterior = adaptive.majority_posterior(model.prior, [model.of(w) for w in who], given)
        outcome.labels += len(given)
        if adaptive.unsettled_dispute(posterior, given, threshold=threshold, max_labels=max_labels):
            outcome.disputed += 1
        else:
            _close(outcome, given, int(truth))
    return outcome


def _row(outcome: Outcome, candidates: int, baseline: Outcome) -> str:
    wrong = outcome.wrong / outcome.vetted if outcome.vetted else float("nan")
    saved = 1 - outcome.labels / baseline.labels
    return (f"| {outcome.policy} | {outcome.labels / candidates:.2f} | {outcome.labels:,} | {saved:+.0%} | "
            f"{outcome.vetted:,} | {wrong:.2%} | {outcome.disputed:,} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", type=int, default=3000)
    parser.add_argument("--unsolvable", type=float, default=0.7, help="share of candidates truly unsolvable")
    parser.add_argument("--threshold", type=float, default=adaptive.DEFAULT_THRESHOLD)
    parser.add_argument("--max-labels", type=int, default=adaptive.DEFAULT_MAX_LABELS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--teams", nargs="+", choices=sorted(TEAMS), default=list(TEAMS))
    parser.add_argument("--thresholds", nargs="*", type=float, default=[])
    args = parser.parse_args()
    for name in args.teams:
        team = TEAMS[name]
        rng = np.random.default_rng(args.seed)
        truths = (rng.random(args.candidates) < args.unsolvable).astype(int)
        outcomes = [fixed(truths, team, k, np.random.default_rng(args.seed + k)) for k in (1, 2, 3)]
        for threshold in [args.threshold, *args.thresholds]:
            outcomes.append(adaptive_overlap(truths, team, threshold=threshold, max_labels=args.max_labels,
                                             rng=np.random.default_rng(args.seed + 10)))
        print(f"\nteam {name}: accuracies {', '.join(f'{a:g}' for a in team)}; {args.candidates:,} candidates, "
              f"{args.unsolvable:.0%} truly unsolvable\n")
        print("| policy | labels per candidate | labels | saved vs k = 2 | vetted | wrong in vetted | disputed |")
        print("|---|---|---|---|---|---|---|")
        for outcome in outcomes:
            print(_row(outcome, args.candidates, outcomes[1]))


if __name__ == "__main__":
    main()
