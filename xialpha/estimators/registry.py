"""Every estimator a sweep computes next to a fit, in one registry (ESTIMATORS).

An entry says what the estimator is called (the prefix of its stored columns, <name>_d_pos ...
<name>_f1, and `Estimate.method`), what it needs, whether a selection may choose by it, the
[estimators] settings that switch it on and tune it, the results columns it fills besides its
estimates, and how to compute it from a fit. The rest of xialpha derives from the registry: the
store's results columns (`xialpha.storage.schema`), the spec's [estimators] table and config keys
(`xialpha.spec.sweep`), what a fit computes and stores (`xialpha.estimators.scoring`,
`xialpha.jobs.tasks`), the choices of `xialpha select --estimator`, `[sweep] estimator` and
`XiAlphaSearchCV(estimate=)`, and the estimators a report compares. Adding an estimator is its
module and one entry here.

The command line's parser and the store's schema read this module, so it imports no algorithm:
each entry's `compute` imports its estimator's module when it first runs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from xialpha.estimators import DEFAULT_RHO

if TYPE_CHECKING:
    from xialpha.estimators.svm import SVMParameters, TrainingProblem

# What an estimator needs besides the fit's alpha, xi and decision values, cheapest first.
FIT = "the fit"
KERNEL_ROWS = "kernel rows of the support vectors"
RETRAINING = "retrainings on the training set"
HELD_OUT = "the held-out split (corpus.test_split)"
NEEDS = (FIT, KERNEL_ROWS, RETRAINING, HELD_OUT)


@dataclass(frozen=True)
class Setting:
    """A key of the spec's [estimators] table: its default (bool, int or str; the type of its
    values), the values a str setting takes, and for an int the least value that is on (0 is off).

    keyed_at_default: whether config keys hold the setting when it has its default value. True
    for the settings config keys have always held; a new estimator's setting is False, so that
    adding it leaves the keys of the configurations stored before (which do not use it) as they were.
    keyed: False for a setting that changes how much is computed, never a stored number (span_prune:
    a configuration's estimate is exact or only bounded, never another value), which config keys never
    hold: the rows of a sweep with and without it have the same keys, and so tie alike in a ranking.
    """

    key: str
    default: bool | int | str
    doc: str
    choices: tuple[str, ...] = ()
    least_on: int = 1
    keyed_at_default: bool = True
    keyed: bool = True


@dataclass(frozen=True)
class ExtraColumn:
    """A results column an estimator fills besides its estimates: name, type ("int" (64-bit), "int32"
    or "float"), meaning, and its value from the estimate and the settings (None: null)."""

    name: str
    type: str
    doc: str
    value: Callable[[object, Mapping], object]


@dataclass(frozen=True, eq=False)
class FitData:
    """What an estimator reads besides the fit (an `xialpha.estimators.svm.SVMFit`).

    problem, parameters: what the fit was trained on and how (`fit_svm(problem, parameters)`);
    r_delta2: R_delta^2 of the training set; settings: every [estimators] setting by key; kernel: where kernel
    blocks of the support vectors are read (the Gram, None on the linear path, or the features under
    a named kernel); held_out: (y_test (m,), test data: (m, d) features or the (m, n) cross-Gram),
    None without a held-out split; rho: the xi-alpha rho of a per-rho estimator.
    """

    problem: TrainingProblem
    parameters: SVMParameters
    r_delta2: float
    settings: Mapping
    kernel: object = None
    held_out: tuple | None = None
    rho: float = DEFAULT_RHO

    def at(self, rho: float) -> FitData:
        """The same data for a per-rho estimator at `rho`."""
        return replace(self, rho=rho)


@dataclass(frozen=True)
class Estimator:
    """One registered estimator.

    name: column prefix and `Estimate.method`; needs: one of NEEDS; compute(fit, data: FitData) ->
    Estimate; selectable: a selection may choose by it (its per-example indicators are stored for
    the significance tests); per_rho: computed at each xi-alpha rho, else once per fit; switch: the
    setting that turns it on (true, or an int >= its least_on), None when always computed;
    settings: its [estimators] keys, the switch first; columns: its other results columns;
    sizes: the results columns of the examples and positives it counts over, when that is not the
    training set (n, n_pos).
    """

    name: str
    doc: str
    needs: str
    compute: Callable
    selectable: bool = True
    per_rho: bool = False
    settings: tuple[Setting, ...] = ()
    columns: tuple[ExtraColumn, ...] = ()
    sizes: tuple[str, str] | None = None

    @property
    def switch(self) -> Setting | None:
        return self.settings[0] if self.settings else None

    def is_on(self, settings: Mapping) -> bool:
        """Whether `settings` (every setting by key) turn this estimator on."""
        if self.switch is None:
            return True
        value = settings[self.switch.key]
        return value if isinstance(value, bool) else value >= self.switch.least_on

    def column_values(self, estimate, settings: Mapping) -> dict:
        """{column: value} of `columns` for a computed estimate of this estimator."""
        return {column.name: column.value(estimate, settings) for column in self.columns}


def _xa(fit, data: FitData):
    from xialpha.estimators.xi_alpha import xi_alpha

    return xi_alpha(fit.alpha, fit.xi, fit.y, data.r_delta2, data.rho)


def _apparent(fit, data: FitData):
    from xialpha.estimators.baselines import apparent

    return apparent(fit)


def _loo(fit, data: FitData):
    from xialpha.estimators.loo import loo_exact

    return loo_exact(data.problem, data.parameters, fit=fit, prune=data.settings["loo_prune"], r_delta2=data.r_delta2)


def _holdout(fit, data: FitData):
    from xialpha.estimators.baselines import holdout

    if data.held_out is None:
        raise ValueError("held_out: the holdout estimator needs the held-out split (y_test, test data)")
    return holdout(fit, *data.held_out)


def _kfold(fit, data: FitData):
    from xialpha.estimators.baselines import kfold

    return kfold(data.problem, data.parameters, k=data.settings["kfold"], fit=fit)


def _bootstrap(fit, data: FitData):
    from xialpha.estimators.baselines import bootstrap

    return bootstrap(data.problem, data.parameters, n_boot=data.settings["bootstrap"], fit=fit)


def _span(fit, data: FitData):
    from xialpha.estimators.span import span_estimate

    return span_estimate(fit, data.kernel)


def _bound(name: str) -> Callable[[object, Mapping], object]:
    """The value of a count bound column: `name` of a `xialpha.estimators.span.SpanBounds` (a
    configuration decided by bounds), None for an estimate (its counts are exact)."""
    return lambda estimate, settings: getattr(estimate, name, None)


def _xa_ext(fit, data: FitData):
    from xialpha.estimators.extended import xi_alpha_extended

    return xi_alpha_extended(fit, data.kernel, data.r_delta2, rho=data.rho, depth=data.settings["xa_ext_depth"])


# In the order of the results columns.
ESTIMATORS: tuple[Estimator, ...] = (
    Estimator(
        "xa",
        "xi-alpha (Joachims 2000) at the row's rho",
        FIT,
        _xa,
        per_rho=True,
        columns=(
            ExtraColumn(
                "xa_d",
                "int",
                "xi-alpha: examples counted as leave-one-out errors (d_pos + d_neg)",
                lambda estimate, settings: int(estimate.d),
            ),
        ),
    ),
    Estimator("apparent", "training errors of the fit itself", FIT, _apparent, selectable=False),
    Estimator(
        "loo",
        "exact leave-one-out",
        RETRAINING,
        _loo,
        settings=(
            Setting("exact_loo", False, "exact leave-one-out: retrain the support vectors that are not sure errors"),
            Setting(
                "loo_prune",
                "support",
                "which support vectors exact leave-one-out retrains",
                choices=("support", "xi_alpha"),
            ),
        ),
        columns=(
            ExtraColumn(
                "loo_retrains",
                "int",
                "exact leave-one-out: retrainings actually run",
                lambda estimate, settings: estimate.retrains or None,
            ),
        ),
    ),
    Estimator(
        "holdout",
        "errors on the test split",
        HELD_OUT,
        _holdout,
        settings=(Setting("holdout", False, "count errors on corpus.test_split"),),
        columns=(
            ExtraColumn("holdout_n", "int", "held-out examples", lambda estimate, settings: estimate.n),
            ExtraColumn(
                "holdout_n_pos", "int", "held-out positive examples", lambda estimate, settings: estimate.n_pos
            ),
        ),
        sizes=("holdout_n", "holdout_n_pos"),
    ),
    Estimator(
        "kfold",
        "k-fold cross-validation",
        RETRAINING,
        _kfold,
        settings=(Setting("kfold", 0, "k of k-fold cross-validation (0: off)", least_on=2),),
        columns=(
            ExtraColumn("kfold_k", "int32", "k of the k-fold estimate", lambda estimate, settings: settings["kfold"]),
        ),
    ),
    Estimator(
        "bootstrap",
        ".632 bootstrap",
        RETRAINING,
        _bootstrap,
        settings=(Setting("bootstrap", 0, "bootstrap replicates (0: off)"),),
    ),
    Estimator(
        "span",
        "span estimate of the leave-one-out margin (Vapnik & Chapelle)",
        FIT,
        _span,
        settings=(
            Setting("span", True, "the span estimate of the leave-one-out error"),
            Setting(
                "span_prune",
                "off",
                "make span's exact calls only for the configurations of a C path a per-category selection by "
                "this metric (any: by any of them) may need (xialpha.selection.contenders); the others store "
                "the interval their cheap calls give",
                choices=("off", "any", "f1", "error", "recall", "precision"),
                keyed=False,
            ),
        ),
        columns=tuple(
            ExtraColumn(
                f"span_{count}_{side}",
                "int",
                f"span, decided by bounds (span_prune): its {count} is at {'least' if side == 'low' else 'most'}",
                _bound(f"{count}_{side}"),
            )
            for count in ("d_pos", "d_neg")
            for side in ("low", "high")
        ),
    ),
    Estimator(
        "xa_ext",
        "SVMlight's extended xi-alpha, with a search depth",
        KERNEL_ROWS,
        _xa_ext,
        per_rho=True,
        settings=(Setting("xa_ext_depth", 0, "search depth of the extended xi-alpha (0: off)"),),
        columns=(
            ExtraColumn(
                "xa_ext_depth",
                "int32",
                "search depth of the extended xi-alpha estimator",
                lambda estimate, settings: settings["xa_ext_depth"],
            ),
        ),
    ),
)

# The estimator a selection uses unless told otherwise (docs/concepts.md, "Which estimator to select by").
DEFAULT = "span"

BY_NAME = {estimator.name: estimator for estimator in ESTIMATORS}
NAMES = tuple(BY_NAME)
SELECTABLE = tuple(estimator.name for estimator in ESTIMATORS if estimator.selectable)
SETTINGS: tuple[Setting, ...] = tuple(setting for estimator in ESTIMATORS for setting in estimator.settings)
DEFAULT_SETTINGS = {setting.key: setting.default for setting in SETTINGS}


def estimator(name: str) -> Estimator:
    """The registered estimator `name`; KeyError naming the registered ones otherwise."""
    if name not in BY_NAME:
        raise KeyError(f"estimator {name!r} is not registered (registered: {', '.join(NAMES)})")
    return BY_NAME[name]


def switched_on(settings: Mapping) -> tuple[Estimator, ...]:
    """The estimators that `settings` (every setting by key) compute, in registry order."""
    return tuple(estimator for estimator in ESTIMATORS if estimator.is_on(settings))


def always_on() -> tuple[str, ...]:
    """The selectable estimators every sweep computes (no switch): what a selection falls back to."""
    return tuple(estimator.name for estimator in ESTIMATORS if estimator.switch is None and estimator.selectable)


def default_for(computed) -> str:
    """DEFAULT when it is among the estimators `computed`, else the first one every sweep computes (xa)."""
    return DEFAULT if DEFAULT in computed else always_on()[0]


def by_preference(names) -> list[str]:
    """Estimator `names` in the order people read them: DEFAULT first, then by what they need
    (cheapest first, registry order within), those never chosen by last."""

    def rank(name: str) -> tuple:
        entry = estimator(name)
        return not entry.selectable, name != DEFAULT, NEEDS.index(entry.needs)

    return sorted(names, key=rank)


def keyed_settings(settings: Mapping) -> dict:
    """The settings that config keys hold (see `Setting.keyed` and `Setting.keyed_at_default`)."""
    return {
        s.key: settings[s.key] for s in SETTINGS if s.keyed and (s.keyed_at_default or settings[s.key] != s.default)
    }
