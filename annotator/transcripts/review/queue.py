"""The review queue's order, read a page at a time from its index (issue 21, item 3: Review at 1,000,000 transcripts).

Order (issue 10, item 4): unreviewed before reviewed; within each, the transcripts whose rule sets disagree,
then those the judge is unsure of (`unmatched`, or no verdict), both by id, then the rest, a sample in a random
order. The part is the SQL expression `tables.QUEUE_PART`, the place within it `tables.QUEUE_WITHIN`: the id, or
for the sample a fixed pseudo-random rank of the id (`tables.SAMPLE_RANK`). Both are the keys of the index
`ix_transcript_review`, so the next page of the queue is a short range of that index (keyset pagination), never a
read of every transcript. A reviewer's seed chooses where the sample starts in the ranks' circle: each reviewer's
sample starts elsewhere and keeps its order, and a transcript keeps its place in it when others are added.

The tag filter reads the reviewed transcripts that carry tags (only reviews set tags: few) and checks each one's
list in Python (tags are a JSON list: no portable SQL test for membership).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, literal_column, select, tuple_
from sqlalchemy.sql import Select
from sqlmodel import Session

from annotator.database.light_tables import QUEUE_PART, QUEUE_WITHIN, REVIEWED, SAMPLE_RANK_MODULUS
from annotator.database.models import Transcript
from annotator.database.raw_rows import iter_raw_tuples
from annotator.transcripts.review.decisions import as_list

PART = literal_column(QUEUE_PART)
WITHIN = literal_column(QUEUE_WITHIN)
_SAMPLE = 2  # the sample's part among the unreviewed (+3 among the reviewed)
PAGE = 50  # transcripts read at a time
_MASK = (1 << 64) - 1


def sample_start(seed: int) -> int:
    """Where the seed's sample starts among the ranks (0 .. 2^31 - 2): splitmix64's finaliser of the seed."""
    x = ((seed & _MASK) + 0x9E3779B97F4A7C15) & _MASK
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & _MASK
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & _MASK
    return (x ^ (x >> 31)) % SAMPLE_RANK_MODULUS


def _segments(seed: int) -> list[tuple[int, tuple[int, int] | None]]:
    """The queue as ranges of the index in order: (part, None: all of it, or (low, high) of its ranks)."""
    start = sample_start(seed)
    segments: list[tuple[int, tuple[int, int] | None]] = []
    for reviewed in (0, 3):
        segments += [(reviewed, None), (reviewed + 1, None)]
        segments += [(reviewed + _SAMPLE, (start, SAMPLE_RANK_MODULUS)), (reviewed + _SAMPLE, (0, start))]
    return segments


def _filtered(query: Select[Any], model: str | None, prompt: str | None) -> Select[Any]:
    if model is not None:
        query = query.where(Transcript.model == model)
    if prompt is not None:
        query = query.where(Transcript.prompt == prompt)
    return query


def _walk(session: Session, *, model: str | None, prompt: str | None, seed: int,
          after: tuple[int, int, int] | None, page: int) -> list[tuple[int, int, int]]:
    """Up to `page` entries (segment, within, id) of the queue after `after`, in order."""
    found: list[tuple[int, int, int]] = []
    for index, (part, ranks) in enumerate(_segments(seed)):
        if after is not None and index < after[0]:
            continue
        query = _filtered(select(WITHIN, Transcript.id).where(PART == part), model, prompt)
        if ranks is not None:
            query = query.where(WITHIN >= ranks[0], WITHIN < ranks[1])
        if after is not None and index == after[0]:
            query = query.where(tuple_(WITHIN, Transcript.id) > tuple_(after[1], after[2]))
        rows = session.execute(query.order_by(WITHIN, Transcript.id).limit(page - len(found))).all()
        found += [(index, int(within), int(transcript_id)) for within, transcript_id in rows]
        if len(found) >= page:
            break
    return found


def _tagged(session: Session, *, model: str | None, prompt: str | None, tag: str, seed: int) -> list[int]:
    """Every transcript whose review carries `tag`, in queue order (only reviewed transcripts carry tags)."""
    query = _filtered(select(PART, WITHIN, Transcript.id, Transcript.tags).where(
        literal_column(REVIEWED), Transcript.tags.is_not(None)), model, prompt)
    place = {(part, ranks): index for index, (part, ranks) in enumerate(_segments(seed))}
    start = sample_start(seed)
    keyed = []
    for row in iter_raw_tuples(session, query):
        part, within, transcript_id, tags = row
        if tag not in as_list(tags):
            continue
        ranks = None if part % 3 != _SAMPLE else ((start, SAMPLE_RANK_MODULUS) if within >= start else (0, start))
        keyed.append((place[(part, ranks)], within, transcript_id))
    return [transcript_id for *_, transcript_id in sorted(keyed)]


@dataclass
class ReviewQueue:
    """One reviewer's walk through the queue under filters: the ids read so far (`ids`), read on as the reviewer
    goes (`id_at`), and the queue's size when it was opened (`size`). A transcript shows once per walk, even when
    a review moves it further down the queue meanwhile."""

    model: str | None = None
    prompt: str | None = None
    tag: str | None = None
    seed: int = 0
    page: int = PAGE
    ids: list[int] = field(default_factory=list)
    size: int = 0
    _after: tuple[int, int, int] | None = None
    _done: bool = False
    _seen: set[int] = field(default_factory=set)

    @classmethod
    def open(cls, session: Session, *, model: str | None = None, prompt: str | None = None, tag: str | None = None,
             seed: int = 0, page: int = PAGE) -> ReviewQueue:
        """The queue under these filters with its first page read."""
        queue = cls(model=model, prompt=prompt, tag=tag, seed=seed, page=page)
        if tag is not None:
            queue.ids = _tagged(session, model=model, prompt=prompt, tag=tag, seed=seed)
            queue.size, queue._done = len(queue.ids), True
            return queue
        queue.size = int(session.execute(_filtered(select(func.count()).select_from(Transcript), model,
                                                   prompt)).scalar() or 0)
        queue._read(session)
        return queue

    def _read(self, session: Session) -> None:
        entries = _walk(session, model=self.model, prompt=self.prompt, seed=self.seed, after=self._after,
                        page=self.page)
        if len(entries) < self.page:
            self._done = True
        if entries:
            self._after = entries[-1]
        fresh = [transcript_id for *_, transcript_id in entries if transcript_id not in self._seen]
        self._seen.update(fresh)
        self.ids += fresh

    def id_at(self, session: Session, position: int) -> int | None:
        """The id at `position` (from 0), reading on as far as needed; None past the end."""
        while position >= len(self.ids) and not self._done:
            self._read(session)
        if self._done:
            self.size = len(self.ids)  # the walk's own length: transcripts added or removed meanwhile
        return self.ids[position] if 0 <= position < len(self.ids) else None

    def __len__(self) -> int:
        return max(self.size, len(self.ids))

    def __iter__(self) -> Iterator[int]:
        return iter(self.ids)


def review_queue(
    session: Session, *, model: str | None = None, prompt: str | None = None, tag: str | None = None,
    seed: int = 0, limit: int | None = None,
) -> list[int]:
    """Transcript ids in review order (the module docstring), the first `limit` or all of them; `tag`: only
    the transcripts whose review has that tag."""
    queue = ReviewQueue.open(session, model=model, prompt=prompt, tag=tag, seed=seed,
                             page=PAGE if limit is None else max(1, min(limit, PAGE)))
    position = 0
    while (limit is None or position < limit) and queue.id_at(session, position) is not None:
        position += 1
    return queue.ids[:position]


def review_options(session: Session) -> dict[str, list[str]]:
    """The models and prompts that have transcripts, for the Review page's filters: each distinct (model,
    prompt) found by one step along their index (a loose index scan), not a read of every transcript."""
    pairs: list[tuple[str, str]] = []
    step = select(Transcript.model, Transcript.prompt).order_by(Transcript.model, Transcript.prompt).limit(1)
    while True:
        query = step if not pairs else step.where(tuple_(Transcript.model, Transcript.prompt) > tuple_(*pairs[-1]))
        row = session.execute(query).first()
        if row is None:
            break
        pairs.append((row[0], row[1]))
    return {"model": list(dict.fromkeys(m for m, _ in pairs)), "prompt": sorted({p for _, p in pairs})}

