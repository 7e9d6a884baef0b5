"""Simulated annotators with known accuracies labelling candidates with a known truth, in memory or in a database
through the label writer."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sqlalchemy import Engine

from annotator.database.engine import write_session
from annotator.labelling.labels import LabelRow, record_labels
from tests.support.candidates import add_candidates, add_user

ACCURACIES = (0.95, 0.90, 0.85, 0.75, 0.65)


def simulate(accuracies: tuple[float, ...], candidates: int, *, seed: int, unsolvable: float = 0.6,
             overlap: float = 1.0) -> tuple[np.ndarray, pd.DataFrame]:
    """Truths (1: truly unsolvable) and labels (`task, worker, label`): annotator `a{i}` labels each candidate (with
    probability `overlap`), right with their accuracy whatever the truth."""
    rng = np.random.default_rng(seed)
    truth = (rng.random(candidates) < unsolvable).astype(int)
    rows = []
    for item, true in enumerate(truth):
        for rater, right in enumerate(accuracies):
            if overlap < 1 and rng.random() > overlap:
                continue
            rows.append((item, f"a{rater}", int(true if rng.random() < right else 1 - true)))
    return truth, pd.DataFrame(rows, columns=["task", "worker", "label"])


def store(engine: Engine, frame: pd.DataFrame) -> tuple[list[int], dict[str, int]]:
    """The simulated labels written as the annotators' own through `record_labels` (new candidates and accounts
    named as the frame's workers); the candidates' ids (by task) and {worker: annotator id}."""
    ids = add_candidates(engine, int(frame["task"].max()) + 1)
    people = {name: add_user(engine, name).id for name in dict.fromkeys(frame["worker"])}
    rows = [LabelRow(ids[task], people[worker], label, 0 if label == 1 else None)
            for task, worker, label in frame.itertuples(index=False)]
    with write_session(engine) as session:
        record_labels(session, rows=rows)
    return ids, people
