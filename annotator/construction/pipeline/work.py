"""One problem's work in a generate run: its chains of requests side by side, then its changed candidates
written together.

Every candidate is its own chain of requests, so a problem's 2k chains run side by side and the endpoint,
not the pipeline, is the limit. A problem's candidates are written together once all its chains have
finished; requests already answered are in the call cache, so a killed or cancelled run that is started
again repeats none of them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session

from annotator.construction.pipeline.drafts import Draft, ProblemInput
from annotator.construction.pipeline.persistence import Existing, fingerprint, provenance_json, store_drafts
from annotator.construction.pipeline.progress import GenerateProgress
from annotator.construction.pipeline.steps import ItemFailed, Pipeline, Unparseable
from annotator.runs.llm import CallStats, Database

ProgressCallback = Callable[[int, int, CallStats], None]


async def _verified(pipeline: Pipeline, draft: Draft) -> Draft:
    await pipeline.verify(draft)
    return draft


@dataclass
class ProblemWork:
    """Turns a problem into stored candidates: Step 1 (and 2) for a new problem, or Step 2 for the drafts a
    `--steps 2` run verifies (`to_verify`, by problem id)."""

    pipeline: Pipeline
    db: Database
    progress: GenerateProgress
    existing: Existing
    provenance: dict[str, Any]
    to_verify: dict[int, list[Draft]] = field(default_factory=dict)
    progress_callback: ProgressCallback | None = None

    def __post_init__(self) -> None:
        self._provenance_json = provenance_json(self.provenance)
        self._ours = dict(self.existing.ours)  # grows as the run writes candidates

    async def __call__(self, problem: ProblemInput) -> None:
        changed = self._changed(await self._drafts(problem))
        if changed:  # one transaction for the problem's candidates, committed before the problem counts as done
            await self.db.write(lambda session: self._store(session, changed))
            self._ours.update((draft.data_id, digest) for draft, digest in changed)
        self.progress.done += 1
        if self.progress_callback is not None:
            self.progress_callback(self.progress.done, self.progress.total, self.progress.stats)

    async def _chains(self, problem: ProblemInput) -> list[Coroutine[Any, Any, Draft]]:
        """The problem's chains of requests, one per candidate it may write."""
        pipeline = self.pipeline
        if 1 not in pipeline.options.steps:
            return [_verified(pipeline, draft) for draft in self.to_verify[problem.id]]
        conditions, extraction = await pipeline.extract(problem)
        chains = []
        for k, condition in enumerate(conditions, 1):
            for kind in pipeline.options.rewrite_types:
                if problem.data_id(kind, k) in self.existing.protected:
                    self.progress.skipped += 1  # don't pay for a candidate we would not write
                else:
                    chains.append(pipeline.candidate(problem, k, condition, kind, extraction))
        return chains

    async def _drafts(self, problem: ProblemInput) -> list[Draft]:
        """The candidates made for `problem`; failures are counted and kept, not raised."""
        try:
            results = await asyncio.gather(*await self._chains(problem), return_exceptions=True)
        except ItemFailed as exc:
            self.progress.item_failed(problem, exc)
            return []
        except Unparseable as exc:
            self.progress.problem_unparseable(problem, exc)
            return []
        drafts: list[Draft] = []
        for result in results:
            if isinstance(result, ItemFailed):
                self.progress.item_failed(problem, result)
            elif isinstance(result, BaseException):
                raise result
            else:
                drafts.append(result)
        return drafts

    def _changed(self, drafts: list[Draft]) -> list[tuple[Draft, str]]:
        """The drafts whose content differs from what is stored, with their fingerprints."""
        changed: list[tuple[Draft, str]] = []
        for draft in drafts:
            self.progress.produced(draft)
            self.progress.unparseable_answers += len(draft.outputs.get("parse_errors", []))
            digest = fingerprint(draft, self._provenance_json)
            if self._ours.get(draft.data_id, "") == digest:
                self.progress.unchanged += 1  # produced again exactly as stored: nothing to write
            else:
                changed.append((draft, digest))
        return changed

    def _store(self, session: Session, changed: list[tuple[Draft, str]]) -> None:
        # Runs on the database thread: `ours` there is the set of data_ids stored before this write.
        self.progress.written += store_drafts(session, changed, provenance=self.provenance, ours=self._ours)

