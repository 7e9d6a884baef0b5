"""Figures the snapshot tests have computed in a child process (`annotator.figures.child`): they say which process
computed them and how many labels they saw; `GATE_VARIABLE` names a FIFO they wait on until the test writes to it;
`CRASHING` dies without a word and `RAISING` raises."""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import func, select
from sqlmodel import Session

from annotator.database.models import Annotation
from annotator.figures import fingerprints
from annotator.figures.pages import Figures

KEY = "child_test"
GATE_VARIABLE = "ANNOTATOR_TEST_FIGURES_GATE"


def _counted(session: Session) -> dict[str, Any]:
    count = session.execute(select(func.count()).select_from(Annotation)).scalar_one()
    if gate := os.environ.get(GATE_VARIABLE):
        with open(gate, encoding="utf-8") as fifo:  # opens once the test opens it to write, reads until it closes
            fifo.read()
    return {"pid": os.getpid(), "labels": count}


def _crash(session: Session) -> dict[str, Any]:
    os._exit(3)


def _raise(session: Session) -> dict[str, Any]:
    raise LookupError("no such figures")


COUNTING = Figures(KEY, _counted, fingerprints.labels_version)
CRASHING = Figures(KEY, _crash, fingerprints.labels_version)
RAISING = Figures(KEY, _raise, fingerprints.labels_version)
