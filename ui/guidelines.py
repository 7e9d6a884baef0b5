"""The human-check guidelines annotators see next to each candidate: written in the core
(`annotator.labelling.guidelines`), which the published dataset's card quotes too."""

from annotator.labelling.guidelines import (
    DISTRACTOR,
    RELIABLEMATH_G3,
    UMWP_CHECKS,
    UMWP_INTRO,
    guideline_for,
    keys_line,
    umwp_category,
)

__all__ = ["DISTRACTOR", "RELIABLEMATH_G3", "UMWP_CHECKS", "UMWP_INTRO", "guideline_for", "keys_line",
           "umwp_category"]
