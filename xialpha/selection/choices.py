"""The selection options (the CLI parser reads them; the estimators are the registry's)."""

from xialpha.estimators.registry import DEFAULT, NAMES, SELECTABLE

DEFAULT_ESTIMATOR = DEFAULT  # span: what a selection uses unless told otherwise
DEFAULT_SMOOTH = True  # rank by each value averaged with its C neighbours' (xialpha.selection.smoothing)
DEFAULT_RHO = 1.0
# metric -> whether larger values are better
MAXIMISED = {"f1": True, "recall": True, "precision": True, "error": False, "cost": False}
METRIC_CHOICES = tuple(MAXIMISED)
AVERAGES = ("macro", "micro")
ESTIMATOR_CHOICES = SELECTABLE  # what a selection may choose by
SHOWN_ESTIMATORS = NAMES  # what a report may show
