"""`XiAlphaSearchCV`: grid search for SVMs scored by one-fit leave-one-out estimates, not resampling.

Each candidate of the grid is fitted ONCE on all the data; its estimate of the leave-one-out
error, recall, precision or F1 is the candidate's score: the span estimate (Vapnik & Chapelle
2000) by default, or the xi-alpha estimate (Joachims 2000), averaged by default with the
estimates of the neighbouring C of the same candidate otherwise, as `xialpha select` ranks
(`xialpha.selection.smoothing`). A grid of g candidates costs g trainings (plus one
scikit-learn fit of the best) where k-fold cross-validation costs k * g + 1.
Candidates are trained by `xialpha.estimators.svm.fit_svm` and scored by
`xialpha.estimators.scoring.one_fit_estimates`, the function a sweep's tasks call too.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from functools import partial
from numbers import Real

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.metrics import accuracy_score, f1_score, precision_score, recall_score
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.model_selection import ParameterGrid
from sklearn.pipeline import Pipeline
from sklearn.svm import SVC, LinearSVC
from sklearn.utils import get_tags
from sklearn.utils._param_validation import (
    HasMethods,
    Interval,
    InvalidParameterError,
    StrOptions,
    validate_parameter_constraints,
)
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_array, check_consistent_length, check_is_fitted, column_or_1d

from xialpha.errors import did_you_mean
from xialpha.estimators import KERNEL_PARAMETERS, LINEAR, registry
from xialpha.estimators.c_ladder import starting_C
from xialpha.estimators.metrics import Estimate
from xialpha.estimators.scoring import one_fit_estimates
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.search_grid import (
    c_neighbourhoods,
    check_grid_values,
    check_model,
    grids_of,
    split_grid,
    without,
)
from xialpha.selection.c_extension import RANKED, Step, next_step
from xialpha.selection.c_rounds import Round, grow_ladders
from xialpha.selection.edges import grid_position
from xialpha.selection.objective import DEFAULT_RHO, DEFAULT_SMOOTH, RHO
from xialpha.selection.ranking import IN_ORDER, RANK, SELECTION_VALUE, VALUE, Order, rank
from xialpha.spec.grid import AUTO_C_FACTOR, AUTO_C_LIMIT, AUTO_C_ROUNDS
from xialpha.storage.schema import ResultColumn, estimate_columns, estimate_values

LINEAR_TOL = 1e-3  # the linear path's stopping tolerance, comparable to libsvm's default

SCORINGS = {"accuracy": accuracy_score, "f1": f1_score, "recall": recall_score, "precision": precision_score}
# What a candidate can be scored by: the selectable estimators that need only the fit (span, xa).
ESTIMATES = tuple(
    registry.by_preference(e.name for e in registry.ESTIMATORS if e.selectable and e.needs == registry.FIT)
)
N_SPLITS = 1  # n_splits_: each candidate is trained once, on all the data, where k-fold CV trains k times


class XiAlphaSearchCV(MetaEstimatorMixin, ClassifierMixin, BaseEstimator):
    """Exhaustive search over `param_grid`, scoring each candidate by a one-fit LOO estimate.

    estimator: an `sklearn.svm.SVC` (kernel linear, rbf, poly, sigmoid or precomputed), a
        `LinearSVC(loss="hinge")`, or a `Pipeline` whose last step is one (e.g. TfidfVectorizer +
        LinearSVC); grid names follow `set_params` (`C`, or `svc__C` in a pipeline). Every
        candidate is trained by xialpha from the estimator's public parameters (`Candidates`):
        linear ones (SVC(kernel="linear"), LinearSVC) by the linear solver on the sparse features
        with warm starts along the grid, no Gram matrix; the others by libsvm. Only the best one
        is then fitted with scikit-learn as best_estimator_.
    param_grid: a dict or list of dicts as for `GridSearchCV`; its C (`C`, or `svc__C` in a
        pipeline) may be "auto", and None (the default) is C "auto" alone: C values found from the
        data as sweeps with `svm.C = "auto"` find them (`xialpha.jobs.auto`, the same rule): a
        starting C from the data (`xialpha.estimators.c_ladder.starting_C`), 4 C x4 apart, then one
        C more while the best candidate is at its ladder's edge (until interior, flat, settled or
        16 C: `xialpha.selection.c_extension.next_step`). Each C fitted is a candidate of
        cv_results_, in the order fitted.
    scoring: "accuracy" (1 - estimated error), "f1", "recall" or "precision" of `pos_label`.
    estimate: "span" (default: the span estimate, which selects C about as well as 10-fold CV
        on Reuters, see bench/selection_quality.py; one Cholesky factorisation of the unbounded
        support vectors' kernel matrix per candidate) or "xa" (xi-alpha: free, but pessimistic
        for large C).
    rho: the xi-alpha rho (1 is Joachims' recommended estimate, 2 the proven LOO bound); the
        xa_* columns use it whatever `estimate` is.
    pos_label: the positive class for recall, precision and F1 (default: the larger label).
    smooth: rank by each candidate's estimate averaged with those of the next smaller and next
        larger C among the candidates that differ from it only in C (`C`, or `<step>__C` in a
        pipeline), as `xialpha select` does by default (docs/concepts.md, "Which estimator to select by",
        has what bench/selection_quality.py measured of it). False ranks by each estimate alone.

    Binary problems only: y with more than two classes raises ValueError (wrap the search in
    `sklearn.multiclass.OneVsRestClassifier` for one-vs-rest). predict gives y's own labels
    (classes_), as the best candidate's scikit-learn fit predicts them; decision_function > 0
    means classes_[1]. Candidates ranked equal go to the first in grid order
    (`xialpha.selection.ranking.rank` with IN_ORDER, not the selections' SIMPLER): best_index_ and
    rank_test_score then mean what they mean in GridSearchCV, whose users read them.

    What xialpha does instead of folds: each candidate is trained once, on all the data, and
    scored by its one-fit estimate of the leave-one-out `scoring` (n_splits_ = 1: one "split", the
    whole data, where k-fold CV has k); `best_estimator_` is the best candidate fitted on all the
    data by scikit-learn, in refit_time_ seconds. cv_results_ (a dict of arrays, one entry per
    candidate, in the order fitted) has scikit-learn's keys and xialpha's:
        params, param_<name>: the candidate, as in GridSearchCV (masked where a grid lacks <name>);
        mean_test_score: what the candidates are ranked by: with smooth (the default) the
            estimate averaged with those of the next smaller and next larger C of the same
            candidate (the C-neighbour-smoothed span estimate by default), without it the
            candidate's own estimate;
        split0_test_score, estimate_test_score: the candidate's own estimate of `scoring`
            (`1 - <estimate>_error` for accuracy, `<estimate>_<scoring>` otherwise);
        test_score_estimate: the estimate they are of ("span" or "xa"), test_score_smoothed:
            whether mean_test_score averages C neighbours (smooth);
        std_test_score, std_fit_time, std_score_time: 0 (one training, no spread over folds);
        rank_test_score: 1 for the best by mean_test_score;
        mean_fit_time: seconds to train the candidate (and its pipeline's features when new),
            mean_score_time: seconds to compute its estimates;
        xa_error, xa_recall, xa_precision, xa_f1, xa_d_pos, xa_d_neg: the xi-alpha estimates at rho
            (errors, recall, precision, F1 as fractions; d_pos, d_neg the counts of positives and
            negatives counted as errors), and the same span_* columns with estimate="span";
        n_support, r_delta2: the candidate's support vectors and R_delta^2.

    Attributes: cv_results_, n_splits_, refit_time_, best_index_, best_params_, best_score_
    (mean_test_score of the best), best_estimator_, classes_, pos_label_, n_features_in_ (when
    the estimator has it).
    """

    # Each parameter's constraints, as scikit-learn declares them (`_check_params` checks them; rho's
    # bounds are select's, `xialpha.selection.objective.RHO`, in scikit-learn's terms); what
    # the estimator and the grids must be beyond their type is checked by `check_model` and `_checked_grid`,
    # and pos_label against the classes in fit.
    _parameter_constraints: dict = {
        "estimator": [HasMethods(["fit", "decision_function"])],
        "param_grid": [dict, list, None],
        "scoring": [StrOptions(set(SCORINGS))],
        "estimate": [StrOptions(set(ESTIMATES))],
        "rho": [Interval(Real, RHO.low, np.inf if RHO.high is None else RHO.high, closed=RHO.closed)],
        "pos_label": "no_validation",
        "smooth": ["boolean"],
    }

    def __init__(
        self,
        estimator,
        param_grid=None,
        *,
        scoring="accuracy",
        estimate="span",
        rho=DEFAULT_RHO,
        pos_label=None,
        smooth=DEFAULT_SMOOTH,
    ):
        self.estimator = estimator
        self.param_grid = param_grid
        self.scoring = scoring
        self.estimate = estimate
        self.rho = rho
        self.pos_label = pos_label
        self.smooth = smooth

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        inner = get_tags(self.estimator)
        tags.input_tags.sparse = inner.input_tags.sparse
        tags.input_tags.pairwise = inner.input_tags.pairwise
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Fit every candidate on (X, y), score it by its estimate and keep the best. Returns self."""
        self._check_params()
        fixed, auto = self._checked_grid()
        X, y, classes = self._checked_data(X, y)
        if self.pos_label is not None and not isinstance(self.pos_label, (str, int, float, np.generic)):
            raise TypeError(f"pos_label: must be one class label (a number or a string), got {self.pos_label!r}")
        pos_label = classes[1] if self.pos_label is None else self.pos_label
        if pos_label not in classes:
            raise ValueError(f"pos_label: {pos_label!r} is not one of the classes {list(classes)}")
        scorer = Candidates(X, y, pos_label, self.rho, self.estimate)
        candidates = list(ParameterGrid(fixed)) if fixed else []
        rows = [self._scored(scorer, params) for params in candidates]
        for base, C_name in auto:
            self._ladder(scorer, base, C_name, candidates, rows)
        ranking = self._ranking(candidates, rows)
        self.cv_results_ = _results(candidates, rows, ranking, self.estimate, self.smooth)
        self.n_splits_ = N_SPLITS
        self.best_index_ = int(ranking.index[0])
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        # candidates were scored by xialpha's solver: scikit-learn fits the chosen one
        start = time.perf_counter()
        self.best_estimator_ = clone(self.estimator).set_params(**self.best_params_).fit(X, y)
        self.refit_time_ = time.perf_counter() - start
        self.classes_ = classes
        self.pos_label_ = pos_label
        if hasattr(self.best_estimator_, "n_features_in_"):
            self.n_features_in_ = self.best_estimator_.n_features_in_
        return self

    def _scored(self, scorer: Candidates, params: dict) -> dict:
        """The row of the candidate `params`: its estimates, fit and score times and score."""
        row = scorer.score(clone(self.estimator).set_params(**params))
        prefix = self.estimate
        row["score"] = 1.0 - row[f"{prefix}_error"] if self.scoring == "accuracy" else row[f"{prefix}_{self.scoring}"]
        return row

    def _ranking(self, candidates: list[dict], rows: list[dict]) -> pd.DataFrame:
        """The candidates best first (`rank`, ties in grid order), indexed by their position in
        `candidates`: VALUE (the score) and SELECTION_VALUE (what they are ranked by: the score,
        averaged over C neighbours with smooth)."""
        groups, C = c_neighbourhoods(candidates)
        frame = pd.DataFrame({VALUE: [row["score"] for row in rows], ResultColumn.C: C, "curve": groups})
        ranked = rank(
            frame.rename_axis("position").reset_index(), Order(True, self.smooth), tie_break=IN_ORDER, curve=("curve",)
        )
        return ranked.set_index("position")

    def _ladder(self, scorer: Candidates, base: dict, C_name: str, candidates: list[dict], rows: list[dict]) -> None:
        """Add to `candidates` and `rows` the C ladder of each `base` (a grid without C) of C = "auto", one
        after another, grown as sweeps grow theirs (`xialpha.selection.c_rounds.grow_ladders`): AUTO_C_START
        C from the data's starting C, AUTO_C_FACTOR apart, then one C beyond the edge while the best
        candidate is one of this ladder's and sits at its edge (`_ladder_step`)."""
        for params in ParameterGrid(base):
            start = scorer.starting_C(clone(self.estimator).set_params(**params))
            grow_ladders(
                {C_name: start},
                partial(self._score_rungs, scorer, params, candidates, rows),
                partial(self._ladder_step, params, C_name, candidates, rows),
                rounds=AUTO_C_ROUNDS,
            )

    def _score_rungs(
        self, scorer: Candidates, params: dict, candidates: list[dict], rows: list[dict], ladder_round: Round[str]
    ) -> None:
        """Add to `candidates` and `rows` the candidates `params` at each C new in `ladder_round` (its rungs
        keyed by C's name), in the order of C."""
        ladder = [{**params, C_name: C} for C_name, new in ladder_round.rungs.items() for C in new]
        candidates.extend(ladder)
        rows.extend(self._scored(scorer, candidate) for candidate in ladder)

    def _ladder_step(self, params: dict, C_name: str, candidates: list[dict], rows: list[dict]) -> dict[str, Step]:
        """{C_name: the next Step of the ladder of `params`} (`xialpha.selection.c_extension.next_step`)
        while the best of `candidates` is one of its C, else none."""
        best = int(self._ranking(candidates, rows).index[0])
        mine = [i for i, other in enumerate(candidates) if without(other, C_name) == params]
        if best not in mine:
            return {}
        C = np.array([candidates[i][C_name] for i in mine], dtype=float)
        grid = pd.DataFrame(
            {
                ResultColumn.C: C,
                RANKED: [rows[i]["score"] for i in mine],
                ResultColumn.N_SV: [rows[i]["n_support"] for i in mine],
                ResultColumn.N_BOUNDED_SV: [rows[i][ResultColumn.N_BOUNDED_SV] for i in mine],
            }
        ).sort_values(ResultColumn.C)
        at_edge, flat = grid_position(
            grid.set_index(ResultColumn.C)[RANKED].dropna(), float(candidates[best][C_name]), maximise=True
        )
        return {C_name: next_step(grid, at_edge, flat, AUTO_C_LIMIT, AUTO_C_FACTOR)}

    def _check_params(self) -> None:
        """Each parameter against `_parameter_constraints` (scikit-learn's `validate_parameter_constraints`),
        then the estimator's kind. InvalidParameterError (a ValueError and a TypeError) naming the
        parameter first, in scikit-learn's words: "rho: The 'rho' parameter of XiAlphaSearchCV must
        be a float in the range (0.0, inf). Got 0 instead."; a string close to an option then
        says which ("Did you mean f1?")."""
        for name, constraints in self._parameter_constraints.items():
            value = getattr(self, name)
            try:
                validate_parameter_constraints({name: constraints}, {name: value}, caller_name=type(self).__name__)
            except InvalidParameterError as exc:
                options = [option for c in constraints if isinstance(c, StrOptions) for option in sorted(c.options)]
                close = did_you_mean(value, options, listing=None) if isinstance(value, str) else ""
                raise InvalidParameterError(f"{name}: {exc}{close.replace('; did', ' Did', 1)}") from None
        svc = self.estimator[-1] if isinstance(self.estimator, Pipeline) else self.estimator
        if not isinstance(svc, (SVC, LinearSVC)):
            raise TypeError(
                f"estimator: must be sklearn.svm.SVC, LinearSVC or a Pipeline ending in one, got {type(svc).__name__}"
            )

    def _checked_grid(self) -> tuple[list[dict], list[tuple[dict, str]]]:
        """`split_grid` of param_grid, every candidate checked before anything is fitted: each name
        a parameter of the estimator, each value a non-empty list (C: of numbers > 0, or "auto"
        alone), and each candidate valid for the estimator (scikit-learn's own parameter
        constraints, and what xialpha trains: `check_model`). ValueError or TypeError naming
        param_grid (and the grid's index in a list of grids), the parameter and the value, or
        naming estimator where the estimator fails alone too (an auto grid's candidates: at C = 1)."""
        grids = [] if self.param_grid is None else grids_of(self.param_grid)
        known = self.estimator.get_params(deep=True)
        for where, grid in grids:
            for name, values in grid.items():
                check_grid_values(where, name, values, known, type(self.estimator).__name__)
        fixed, auto = split_grid(self.param_grid, self.estimator)
        candidates = [
            *(ParameterGrid(fixed) if fixed else []),
            *({**params, C_name: 1.0} for base, C_name in auto for params in ParameterGrid(base)),
        ]
        for params in candidates:
            try:
                check_model("param_grid", clone(self.estimator).set_params(**params), params)
            except (ValueError, TypeError):
                check_model("estimator", self.estimator)  # its own fault when it fails alone too
                raise
        return fixed, auto

    def _checked_data(self, X, y) -> tuple[object, np.ndarray, np.ndarray]:
        """(X, y, the classes) checked before anything is fitted: y 1-D labels of two classes, X of
        as many samples (and
        an array or sparse matrix of numbers unless the estimator is a Pipeline, whose first step
        reads X itself; square for a precomputed kernel). ValueError or TypeError naming X or y,
        scikit-learn's own words kept after the name."""
        if X is None:
            raise ValueError("X: is required (the samples), got None")
        if y is None:
            raise ValueError("y: XiAlphaSearchCV requires y to be passed, but the target y is None (the class labels)")
        with _named("y", lambda: "must be 1-D class labels, shape (n_samples,)"):
            y = column_or_1d(y, warn=True)
            check_classification_targets(y)
        classes = unique_labels(y)
        if classes.shape[0] != 2:
            found = f"{classes.shape[0]} class" + ("" if classes.shape[0] == 1 else "es")
            raise ValueError(
                f"y: Only binary classification is supported by XiAlphaSearchCV (xi-alpha estimates are binary), "
                f"got {found}; wrap it in sklearn.multiclass.OneVsRestClassifier for one-vs-rest"
            )
        if not isinstance(self.estimator, Pipeline):  # a pipeline's first step validates its own input
            sparse = "csr" if get_tags(self.estimator).input_tags.sparse else False
            with _named("X", lambda: _numbers_wanted(X)):
                X = check_array(X, accept_sparse=sparse, dtype=np.float64)
            svm = self.estimator
            if isinstance(svm, SVC) and svm.kernel == "precomputed" and X.shape[0] != X.shape[1]:
                raise ValueError(f"X: a precomputed kernel must be square, (n_samples, n_samples), got shape {X.shape}")
        elif isinstance(X, (str, bytes)) or not any(hasattr(X, name) for name in ("__len__", "shape", "__array__")):
            raise TypeError(f"X: must be a list or array of samples (documents), got {type(X).__name__}")
        with _named("X, y"):
            check_consistent_length(X, y)
        return X, y, classes

    def predict(self, X):
        """Labels predicted by the best candidate, shape (n_samples,)."""
        check_is_fitted(self)
        return self.best_estimator_.predict(X)

    def decision_function(self, X):
        """Decision values of the best candidate, shape (n_samples,); > 0 means classes_[1]."""
        check_is_fitted(self)
        return self.best_estimator_.decision_function(X)

    def score(self, X, y):
        """The `scoring` metric of the best candidate's predictions on (X, y)."""
        check_is_fitted(self)
        metric = SCORINGS[self.scoring]
        extra = {} if self.scoring == "accuracy" else {"pos_label": self.pos_label_, "zero_division": 0.0}
        return float(metric(y, self.predict(X), **extra))


class Candidates:
    """Scores candidates by training them with `fit_svm` and estimating with `one_fit_estimates`.

    Applies to SVC (kernel linear, rbf, poly, sigmoid or precomputed) and LinearSVC(loss="hinge",
    penalty="l2", fit_intercept=True), alone or last in a Pipeline, from their public parameters
    only (gamma="scale"/"auto" resolved by `resolved_gamma`; class_weight as C and j). The features
    of a pipeline are computed once per distinct set of its other steps' parameters, R_delta^2 once
    per features and kernel. Linear candidates train on the sparse features without a Gram, each
    fit warm-starting from the last one on the same features and class weights (a C grid costs
    little more than its largest C). The scores are those of the exact hinge-loss SVM with
    threshold (SVC's model; LinearSVC also penalises its intercept, so the LinearSVC refitted as
    best_estimator_ differs slightly).
    """

    def __init__(self, X, y: np.ndarray, pos_label, rho: float, estimate: str):
        self.X, self.y, self.rho = X, y, rho
        # only `estimate` of the ESTIMATES with a switch is on (the others cost time; xa always runs)
        self.settings = {
            registry.estimator(name).switch.key: name == estimate
            for name in ESTIMATES
            if registry.estimator(name).switch is not None
        }
        self.classes = unique_labels(y)
        self.y_svm = np.where(y == self.classes[1], 1, -1)  # +1 = classes_[1], as scikit-learn's decision
        self.y_pos = np.where(y == pos_label, 1, -1)
        self.features: dict = {}
        self.r_delta2: dict = {}
        self.last: dict = {}

    def _features(self, model) -> tuple[object, str]:
        """(the SVM of `model`, the key of its features in self.features, computed once per distinct steps)."""
        svm = model[-1] if isinstance(model, Pipeline) else model
        steps = repr(model[:-1].get_params(deep=True)) if isinstance(model, Pipeline) else ""
        if steps not in self.features:
            self.features[steps] = model[:-1].fit_transform(self.X, self.y) if isinstance(model, Pipeline) else self.X
        return svm, steps

    def score(self, model) -> dict:
        """The estimate columns of one candidate (not fitted: only the chosen one is, afterwards), and
        its fit_time (its features when new, its training: s) and score_time (its estimates: s)."""
        start = time.perf_counter()
        svm, steps = self._features(model)
        problem, settings = _training_problem(svm, self.features[steps], self.y_svm)
        key = (steps, None if problem.gram is not None else problem.kernel, repr(problem.kernel_params))
        if key not in self.r_delta2:
            self.r_delta2[key] = max(problem.r_delta2(), np.finfo(float).tiny)
        C, j = _cost(svm, self.classes, self.y)
        state = (steps, repr(svm.class_weight))
        warm = self.last.get(state) if problem.linear else None
        fit = fit_svm(problem, SVMParameters(C, j=j, **settings), warm_start=warm)
        if problem.linear:
            self.last[state] = fit
        fitted = time.perf_counter()
        # the resampling estimators retrain within the solvers' own limits, not the SVC's max_iter
        parameters = SVMParameters(C, j=j, tol=settings["tol"])
        estimates = one_fit_estimates(fit, problem, parameters, self.r_delta2[key], rhos=(self.rho,), **self.settings)
        columns = {}
        computed = {estimate.method: estimate for estimate in estimates.at(self.rho)}
        for method in (name for name in ESTIMATES if name in computed):
            columns |= estimate_values(Estimate.from_indicator(method, self.y_pos, computed[method].indicator))
        return {
            **columns,
            "n_support": fit.n_sv,
            ResultColumn.N_BOUNDED_SV: fit.n_bounded_sv,
            "r_delta2": float(self.r_delta2[key]),
            "fit_time": fitted - start,
            "score_time": time.perf_counter() - fitted,
        }

    def starting_C(self, model) -> float:
        """The C of `model` (its C parameter, class weights apart) where its C ladder starts
        (`xialpha.estimators.c_ladder.starting_C`, in the kernel's feature space)."""
        svm, steps = self._features(model)
        problem, _ = _training_problem(svm, self.features[steps], self.y_svm)
        weight_negative, j = _cost(clone(svm).set_params(C=1.0), self.classes, self.y)
        if problem.linear:
            start = starting_C(problem.X, self.y_svm, j)
        else:
            gram = problem.gram
            if gram is None:
                gram = pairwise_kernels(problem.X, metric=problem.kernel, **(problem.kernel_params or {}))
            start = starting_C(None, self.y_svm, j, gram=np.asarray(gram, dtype=np.float64))
        return start / weight_negative


def _training_problem(svm, features, y: np.ndarray) -> tuple[TrainingProblem, dict]:
    """(the training problem, `SVMParameters`' settings besides C and j) of an SVC or LinearSVC (as
    `check_model` let through) on its features and labels y (n,) in {-1, +1}, from public
    parameters: a Gram (precomputed) or the features under the SVM's kernel; tol, and an SVC's
    max_iter and cache_mb."""
    if isinstance(svm, LinearSVC):
        # LinearSVC's tol and max_iter are LIBLINEAR's criteria: the linear path keeps its own
        return TrainingProblem(y, X=sp.csr_matrix(features, dtype=np.float64)), {"tol": LINEAR_TOL}
    settings = {"tol": svm.tol, "max_iter": svm.max_iter, "cache_mb": svm.cache_size}
    if svm.kernel == "precomputed":
        return TrainingProblem(y, gram=features), settings
    if svm.kernel == LINEAR:
        return TrainingProblem(y, X=sp.csr_matrix(features, dtype=np.float64)), settings
    params = {name: getattr(svm, name) for name in KERNEL_PARAMETERS[svm.kernel]}
    params["gamma"] = resolved_gamma(svm.gamma, features)
    return TrainingProblem(y, X=features, kernel=svm.kernel, kernel_params=params), settings


def resolved_gamma(gamma, X) -> float:
    """SVC's gamma on training features X (n, d) by scikit-learn's documented rule: "scale" is
    1 / (d * X.var()) (1 when X.var() = 0, the variance over all entries, sparse zeros included),
    "auto" 1 / d, a number itself."""
    if isinstance(gamma, str) and gamma == "scale":
        variance = X.multiply(X).mean() - X.mean() ** 2 if sp.issparse(X) else np.asarray(X, dtype=np.float64).var()
        return 1.0 / (X.shape[1] * variance) if variance != 0 else 1.0
    if isinstance(gamma, str) and gamma == "auto":
        return 1.0 / X.shape[1]
    return gamma


def _cost(svm, classes: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(C, j) of `SVMParameters` that give the estimator's C x class_weight bounds: C_neg = C x w(classes[0]),
    j = w(classes[1]) / w(classes[0]), with the weights scikit-learn computes from class_weight."""
    from sklearn.utils.class_weight import compute_class_weight

    weight = compute_class_weight(svm.class_weight, classes=classes, y=y)
    if not np.all(weight > 0):
        raise ValueError(f"estimator: class_weight must give both classes a weight > 0, got {svm.class_weight!r}")
    return svm.C * float(weight[0]), float(weight[1] / weight[0])


def _numbers_wanted(X) -> str:
    """What to say before scikit-learn's words when X is no array of numbers: text needs a Pipeline."""
    values = np.asarray(X, dtype=object) if isinstance(X, (list, tuple)) else X
    kind = getattr(values, "dtype", None)
    if kind is not None and kind.kind in "USO" and any(isinstance(v, (str, bytes)) for v in np.ravel(values)[:100]):
        return (
            "holds text, not numbers: vectorise it first, as a Pipeline does, e.g. "
            "Pipeline([('tfidf', TfidfVectorizer()), ('svm', LinearSVC(loss='hinge'))])"
        )
    return "must be an array or sparse matrix of numbers, shape (n_samples, n_features)"


@contextlib.contextmanager
def _named(name: str, what: Callable[[], str] | None = None) -> Iterator[None]:
    """Inside: a ValueError or TypeError (scikit-learn's checks) raised again as "name: what()
    (its words)", of the same kind (what() is called only then)."""
    try:
        yield
    except (ValueError, TypeError) as exc:
        words = " ".join(str(exc).split())
        text = f"{name}: {what()} ({words})" if what else f"{name}: {words}"
        raise (ValueError(text) if isinstance(exc, ValueError) else TypeError(text)) from None


def _results(candidates: list[dict], rows: list[dict], ranking: pd.DataFrame, estimate: str, smooth: bool) -> dict:
    """cv_results_ of `rows` (one per candidate) as `ranking` (`_ranking`) ranked them: mean_test_score
    what they were ranked by, rank_test_score their RANK, split0_test_score and estimate_test_score
    each one's own `estimate`, test_score_estimate and test_score_smoothed what the scores are."""
    scores = np.array([row["score"] for row in rows], dtype=float)
    by_position = ranking.sort_index()
    results = {
        "params": candidates,
        "mean_fit_time": np.array([row["fit_time"] for row in rows]),
        "std_fit_time": np.zeros_like(scores),
        "mean_score_time": np.array([row["score_time"] for row in rows]),
        "std_score_time": np.zeros_like(scores),
        "split0_test_score": scores,
        "mean_test_score": by_position[SELECTION_VALUE].to_numpy(dtype=float),
        "std_test_score": np.zeros_like(scores),
        "rank_test_score": by_position[RANK].to_numpy().astype(np.int32),
        "estimate_test_score": scores.copy(),
        "test_score_estimate": np.full(len(rows), estimate),
        "test_score_smoothed": np.full(len(rows), bool(smooth)),
    }
    for name in sorted({name for params in candidates for name in params}):
        column = np.ma.MaskedArray(np.empty(len(candidates), dtype=object), mask=True)
        for i, params in enumerate(candidates):
            if name in params:
                column[i] = params[name]
        results[f"param_{name}"] = column
    estimates = [prefix for prefix in ESTIMATES if f"{prefix}_error" in rows[0]] if rows else ["xa"]
    for column in [name for prefix in estimates for name in estimate_columns(prefix)] + ["n_support", "r_delta2"]:
        results[column] = np.array([row[column] for row in rows])
    return results
