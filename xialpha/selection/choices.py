"""The selection options (the CLI parser reads them; the estimators are the registry's)."""

from xialpha.estimators.registry import NAMES, NEEDS, SELECTABLE, always_on, estimator

# The estimator a selection uses unless told otherwise: the span estimate of the LOO error (README,
# "Which estimator to select by"). Sweeps store xa next to it; sweeps run without span select by xa.
DEFAULT_ESTIMATOR = "span"
DEFAULT_RHO = 1.0
# metric -> whether larger values are better
MAXIMISED = {"f1": True, "recall": True, "precision": True, "error": False, "cost": False}
METRIC_CHOICES = tuple(MAXIMISED)
AVERAGES = ("macro", "micro")
ESTIMATOR_CHOICES = SELECTABLE  # what a selection may choose by
SHOWN_ESTIMATORS = NAMES  # what a report may show
FALLBACK_ESTIMATOR = always_on()[0]  # xa: every sweep computes it


def default_for(computed) -> str:
    """DEFAULT_ESTIMATOR when it is among the estimators `computed`, else FALLBACK_ESTIMATOR."""
    return DEFAULT_ESTIMATOR if DEFAULT_ESTIMATOR in computed else FALLBACK_ESTIMATOR


def by_preference(names) -> list[str]:
    """Estimator `names` in the order people read them: DEFAULT_ESTIMATOR first, then by what they
    need (cheapest first, registry order within), those never chosen by last."""
    def rank(name: str) -> tuple:
        entry = estimator(name)
        return not entry.selectable, name != DEFAULT_ESTIMATOR, NEEDS.index(entry.needs)

    return sorted(names, key=rank)
