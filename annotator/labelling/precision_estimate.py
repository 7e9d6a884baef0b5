"""The model-based estimate of a release's precision: the mean, over the vetted candidates, of the Dawid-Skene
posterior probability that a candidate is truly unsolvable (`accuracy.fit_from_database`).

It rests on the model (annotators err independently, each with one confusion matrix), not on a re-check: an audit
of a sample of the vetted set measures the same share directly.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from sqlalchemy import Engine, select
from sqlmodel import Session

from annotator.database.models import Candidate
from annotator.database.vocabulary import SOLVABLE_BY_DESIGN, VettedRule
from annotator.labelling.accuracy import AccuracyReport, fit_from_database
from annotator.labelling.queue import label_target, vetted


@dataclass(frozen=True)
class ShareEstimate:
    """`share`: the mean posterior of being truly unsolvable over the `candidates` vetted candidates that have
    labels in the model (None when none has); `without_labels`: vetted candidates the model has no label of (a
    reviewer's decision alone, or only system annotators' labels when those are left out), not counted."""

    share: float | None
    candidates: int
    without_labels: int


def estimated_unsolvable_share(
    session_or_engine: Session | Engine,
    *,
    rule: VettedRule = VettedRule.complete_or_adjudicated,
    fitted: AccuracyReport | None = None,
    system_annotators: Collection[str] = (),
    llm_rater: bool = False,
) -> ShareEstimate:
    """The model's estimate of the share of the release's unsolvable candidates (vetted by `rule`, the
    solvable-by-design rewrite types left out, as in the `reliablemath` export) that are truly unsolvable.

    `fitted` reuses a fit (`accuracy.fit_from_database`); else one is made here without a bootstrap, over the same
    labels as `agreement` (`system_annotators` named are counted; `llm_rater` adds the LLM verifier).
    """
    if isinstance(session_or_engine, Engine):
        from annotator.database.engine import read_session

        with read_session(session_or_engine) as session:
            return estimated_unsolvable_share(session, rule=rule, fitted=fitted,
                                              system_annotators=system_annotators, llm_rater=llm_rater)
    session = session_or_engine
    if fitted is None:
        fitted = fit_from_database(session, system_annotators=system_annotators, llm_rater=llm_rater, resamples=0)
    query = select(Candidate.id).where(
        vetted(label_target(session), rule=rule),
        Candidate.rewrite_type.not_in([str(kind) for kind in SOLVABLE_BY_DESIGN]),
    )
    ids = list(session.execute(query).scalars())
    posterior = fitted.posterior if fitted is not None else {}
    known = [posterior[i] for i in ids if i in posterior]
    share = sum(known) / len(known) if known else None
    return ShareEstimate(share=share, candidates=len(known), without_labels=len(ids) - len(known))
