"""The judge's worker processes for an import, started while its files are still being read.

A big import of transcripts asks math-verify about their (gold, answer) pairs in worker processes
(`verdicts.judge_workers`); each takes a second or so to load math-verify. They are started as soon as
the files read hold `verdicts.PARALLEL_MIN` transcripts, so that they load it while the rest is read, and are
stopped when the import ends. Kept apart from `annotator.transcripts` so that an import without transcripts loads
none of it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from typing import Any

from annotator.import_export.records import TranscriptRecord


class JudgeWorkers:
    """`with JudgeWorkers() as judges`: `judges.listed(records)` lists a file's records (`counted` hands them on as
    they come), starting the workers once enough transcripts came; `judges.executors` are the workers (None if never
    started)."""

    def __init__(self) -> None:
        self.executors: list[Any] | None = None
        self._stack = ExitStack()
        self._transcripts = 0

    def __enter__(self) -> JudgeWorkers:
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def listed(self, records: Iterable[Any]) -> list[Any]:
        return list(self.counted(records))

    def counted(self, records: Iterable[Any]) -> Iterator[Any]:
        """The records as they come, the workers started once enough of them were transcripts."""
        for record in records:
            if self.executors is None and isinstance(record, TranscriptRecord):
                self._transcripts += 1
                self._start()
            yield record

    def _start(self) -> None:
        from annotator.transcripts.judge import verdicts  # only once transcripts come: it loads the transcripts package

        if self._transcripts >= verdicts.PARALLEL_MIN:
            self.executors = self._stack.enter_context(verdicts.judge_workers(self._transcripts))
