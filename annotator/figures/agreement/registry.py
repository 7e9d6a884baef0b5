"""The agreement coefficients, in the order the report, its JSON, the CLI and the Team page show them: the one
list to add a coefficient to (a module of `annotator/figures/agreement/` declaring `COEFFICIENT`, see `ratings`).

Cohen's kappa is not here: it compares two annotators at a time (`cohen`), so the report has it as tables.
"""

from __future__ import annotations

from annotator.figures.agreement.ac1 import COEFFICIENT as AC1
from annotator.figures.agreement.alpha import COEFFICIENT as ALPHA
from annotator.figures.agreement.fleiss import COEFFICIENT as FLEISS
from annotator.figures.agreement.percent import COEFFICIENT as PERCENT
from annotator.figures.agreement.ratings import Coefficient

COEFFICIENTS: tuple[Coefficient, ...] = (PERCENT, ALPHA, FLEISS, AC1)
