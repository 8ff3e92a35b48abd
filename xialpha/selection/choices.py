"""The selection options, importable without numpy or pandas (the CLI parser reads them)."""

# The estimator a selection uses unless told otherwise; issue 10's figures may name a better one.
DEFAULT_ESTIMATOR = "xa"
DEFAULT_RHO = 1.0
# metric -> whether larger values are better
MAXIMISED = {"f1": True, "recall": True, "precision": True, "error": False, "cost": False}
METRIC_CHOICES = tuple(MAXIMISED)
AVERAGES = ("macro", "micro")
ESTIMATOR_CHOICES = ("xa", "span", "xa_ext", "loo", "kfold", "bootstrap", "holdout", "apparent")
