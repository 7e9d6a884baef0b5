"""The importer's bookkeeping of problems (`annotator.import_export.importer`), in memory that does not grow with the
data.

Stored problems' ids are read a window of positions at a time (one query per `WINDOW` positions of a data source,
files being mostly in position order) and only the last `WINDOWS` windows are kept. The positions this import met
are one bit each per data source (`BitSet`): whether a problem was met before, or earlier in the same file (a
duplicate), stays exact however many there are. Where they were met is kept for the last `LOCATIONS` only: an
error about an earlier record further back names "earlier in this file" or "this import" instead of its place.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from sqlalchemy import insert, select
from sqlmodel import Session

from annotator._util.bitset import BitSet
from annotator.database.models import Problem
from annotator.import_export.records import Location

WINDOW = 2000  # positions read at once
WINDOWS = 8  # windows kept
LOCATIONS = 10_000  # places kept of the problems met last

Key = tuple[str, int]


class ProblemBook:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.queued: dict[Key, dict[str, Any]] = {}  # to be inserted (`flush`): their values
        self._windows: OrderedDict[Key, dict[int, int]] = OrderedDict()  # (source, first position) -> position: id
        self._met: dict[str, BitSet] = {}  # met in this import, with a location
        self._in_part: dict[str, BitSet] = {}  # met in the file being read
        self._places: OrderedDict[Key, Location] = OrderedDict()  # where the last ones were met

    def size(self) -> int:
        """Entries held besides the bits: bounded, whatever the number of problems imported."""
        return len(self.queued) + sum(len(ids) for ids in self._windows.values()) + len(self._places)

    # -- stored problems ----------------------------------------------------------------------------

    def stored_id(self, key: Key) -> int | None:
        """The id of a problem in the database (not one still queued), None if there is none."""
        source, position = key
        start = position - position % WINDOW
        ids = self._windows.get((source, start))
        if ids is None:
            query = select(Problem.position, Problem.id).where(
                Problem.data_source == source, Problem.position >= start, Problem.position < start + WINDOW
            )
            ids = {position: problem_id for position, problem_id in self.session.connection().execute(query)}
            self._windows[(source, start)] = ids
            if len(self._windows) > WINDOWS:
                self._windows.popitem(last=False)
        else:
            self._windows.move_to_end((source, start))
        return ids.get(position)

    def known(self, key: Key) -> bool:
        return key in self.queued or self.stored_id(key) is not None

    def queue(self, key: Key, row: dict[str, Any]) -> None:
        self.queued[key] = row

    def flush(self) -> int:
        """Insert the queued problems in one executemany; how many."""
        if not self.queued:
            return 0
        rows, self.queued = list(self.queued.values()), {}
        self.session.connection().execute(insert(Problem.__table__), rows)
        for row in rows:  # their windows now miss them: read again when asked
            self._windows.pop((row["data_source"], row["position"] - row["position"] % WINDOW), None)
        return len(rows)

    # -- met in this import -------------------------------------------------------------------------

    def start_part(self) -> None:
        self._in_part = {}

    def met(self, key: Key) -> bool:
        bits = self._met.get(key[0])
        return bits is not None and key[1] in bits

    def met_in_part(self, key: Key) -> bool:
        bits = self._in_part.get(key[0])
        return bits is not None and key[1] in bits

    def meet(self, key: Key, location: Location) -> None:
        self._met.setdefault(key[0], BitSet()).add(key[1])
        self._in_part.setdefault(key[0], BitSet()).add(key[1])
        self._places[key] = location
        if len(self._places) > LOCATIONS:
            self._places.popitem(last=False)

    def place(self, key: Key) -> Location | None:
        """Where this import met the problem first, if that is among the last `LOCATIONS` met."""
        return self._places.get(key)
