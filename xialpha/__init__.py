"""xialpha: model selection for SVM text classifiers from one training per candidate.

The xi-alpha estimates (Joachims 2000) bound the leave-one-out error of a soft-margin SVM
from the solution of a single training run; xialpha fans such trainings out on Dask, stores
the estimates in Parquet and selects configurations from them.
"""

from xialpha.version import __version__ as __version__

API = ("sweep", "select", "refit", "results", "certify", "compare", "report", "drift", "as_corpus")
# The public names: the workflow, its plots, the scikit-learn estimator and the version.
__all__ = [*API, "plot", "XiAlphaSearchCV", "__version__"]


def __getattr__(name: str):
    """Lazy exports, so `import xialpha` stays light: the workflow (`xialpha.sweep`, `select`,
    `refit`, `results`, `certify`, `compare`, `report`, `drift`: see xialpha.api), its plots (`xialpha.plot`)
    and XiAlphaSearchCV (imports scikit-learn)."""
    if name in API:
        from xialpha import api

        return getattr(api, name)
    if name == "plot":
        import importlib

        return importlib.import_module("xialpha.plot")
    if name == "XiAlphaSearchCV":
        from xialpha.search import XiAlphaSearchCV

        return XiAlphaSearchCV
    raise AttributeError(f"module 'xialpha' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
