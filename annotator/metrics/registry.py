"""The agreement coefficients, in the order the report, its JSON, the CLI and the Team page show them: the one
list to add a coefficient to (a module of `annotator/metrics/` declaring `COEFFICIENT`, see `ratings`).

Cohen's kappa is not here: it compares two annotators at a time (`cohen`), so the report has it as tables.
"""

from __future__ import annotations

from annotator.metrics.ac1 import COEFFICIENT as AC1
from annotator.metrics.alpha import COEFFICIENT as ALPHA
from annotator.metrics.fleiss import COEFFICIENT as FLEISS
from annotator.metrics.percent import COEFFICIENT as PERCENT
from annotator.metrics.ratings import Coefficient

COEFFICIENTS: tuple[Coefficient, ...] = (PERCENT, ALPHA, FLEISS, AC1)
