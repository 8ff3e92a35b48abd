"""XiAlphaSearchCV: scikit-learn's search contract, span and xi-alpha scores, and a sensible choice."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC, LinearSVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import xialpha
from xialpha.estimators.span import span_estimate
from xialpha.estimators.svm import SVMParameters, TrainingProblem, fit_svm
from xialpha.estimators.xi_alpha import r_delta_squared, xi_alpha
from xialpha.search import XiAlphaSearchCV

C_GRID = [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 1000.0]


# No expected failures: every applicable check passes. Multi-class checks run in their binary
# form because the estimator's tags say multi_class=False (it raises a clear ValueError).
@parametrize_with_checks(
    [
        XiAlphaSearchCV(SVC(), {"C": [0.1, 1.0]}),
        XiAlphaSearchCV(make_pipeline(StandardScaler(), SVC(kernel="rbf")), {"svc__C": [0.1, 1.0]}, scoring="f1"),
        XiAlphaSearchCV(SVC(kernel="precomputed"), {"C": [1.0]}),
        XiAlphaSearchCV(LinearSVC(loss="hinge", random_state=0), {"C": [0.1, 1.0]}),  # liblinear shuffles
    ]
)
def test_scikit_learn_estimator_checks(estimator, check):
    check(estimator)


def toy_problem(seed=0):
    """300 training and 2,000 held-out examples; 3:1 classes, so a too small C predicts the majority."""
    X, y = make_classification(
        n_samples=2300, n_features=10, n_informative=4, flip_y=0.05, weights=[0.75], random_state=seed
    )
    return X[:300], y[:300], X[300:], y[300:]


@pytest.mark.parametrize("estimate", ["span", "xa"])
def test_chosen_C_is_as_good_on_held_out_data_as_grid_search_cv(estimate):
    X, y, X_test, y_test = toy_problem()
    grid, svc = {"C": C_GRID}, SVC(kernel="rbf", gamma=0.3)
    ours = XiAlphaSearchCV(svc, grid, estimate=estimate).fit(X, y)
    reference = GridSearchCV(svc, grid, cv=5).fit(X, y)
    held_out = [SVC(kernel="rbf", gamma=0.3, C=C).fit(X, y).score(X_test, y_test) for C in C_GRID]
    assert max(held_out) - min(held_out) > 0.05  # the choice matters on this problem
    assert ours.score(X_test, y_test) >= reference.score(X_test, y_test) - 0.03
    assert ours.score(X_test, y_test) >= max(held_out) - 0.03
    assert set(ours.cv_results_) >= {
        "params",
        "param_C",
        "mean_test_score",
        "rank_test_score",
        "xa_f1",
        "xa_error",
        f"{estimate}_f1",
        f"{estimate}_error",
    }
    assert list(ours.cv_results_["params"]) == list(reference.cv_results_["params"])
    assert ours.best_params_ == ours.cv_results_["params"][ours.best_index_]
    own = ours.cv_results_["estimate_test_score"]
    assert own[ours.best_index_] == pytest.approx(1 - ours.cv_results_[f"{estimate}_error"][ours.best_index_])
    assert ours.best_score_ == pytest.approx(ours.cv_results_["mean_test_score"][ours.best_index_])
    assert ours.cv_results_["rank_test_score"][ours.best_index_] == 1
    assert ours.best_score_ == pytest.approx(np.max(ours.cv_results_["mean_test_score"]))
    np.testing.assert_array_equal(ours.predict(X_test), ours.best_estimator_.predict(X_test))
    np.testing.assert_allclose(ours.decision_function(X_test), ours.best_estimator_.decision_function(X_test))
    assert ours.best_estimator_.C == ours.best_params_["C"]


def test_scores_are_the_xialpha_estimates_of_each_candidate():
    X, y, _, _ = toy_problem(seed=1)
    search = XiAlphaSearchCV(
        SVC(kernel="rbf", gamma=0.05), {"C": [0.1, 1.0, 10.0]}, scoring="f1", estimate="xa", rho=2.0
    ).fit(X, y)
    assert "span_f1" not in search.cv_results_  # span is computed only when it scores
    y_pm = np.where(y == 1, 1, -1)
    for index, C in enumerate([0.1, 1.0, 10.0]):
        fit = fit_svm(TrainingProblem(y_pm, X=X, kernel="rbf", kernel_params={"gamma": 0.05}), SVMParameters(C))
        r2 = r_delta_squared(X=X, kernel="rbf", kernel_params={"gamma": 0.05})
        expected = xi_alpha(fit.alpha, fit.xi, y_pm, r2, rho=2.0)
        assert search.cv_results_["xa_f1"][index] == pytest.approx(expected.f1, abs=1e-9)
        assert search.cv_results_["estimate_test_score"][index] == pytest.approx(expected.f1, abs=1e-9)
        assert search.cv_results_["n_support"][index] == fit.n_sv


@pytest.mark.parametrize("j", [1.0, 3.0])
def test_span_scores_are_the_span_estimates_of_each_candidate(j):
    X, y, _, _ = toy_problem(seed=2)
    svc = SVC(kernel="rbf", gamma=0.05, class_weight={1: j})
    search = XiAlphaSearchCV(svc, {"C": [0.1, 1.0, 10.0]}, scoring="f1").fit(X, y)
    y_pm = np.where(y == 1, 1, -1)
    gram = rbf_kernel(X, gamma=0.05)
    for index, C in enumerate([0.1, 1.0, 10.0]):
        fit = fit_svm(TrainingProblem(y_pm, gram=gram), SVMParameters(C, j=j))
        assert fit.n_bounded_sv > 0 or C == 10.0  # bounded SVs (alpha = C * j for positives) are handled
        expected = span_estimate(fit, gram)
        assert search.cv_results_["span_d_pos"][index] == expected.d_pos
        assert search.cv_results_["span_d_neg"][index] == expected.d_neg
        assert search.cv_results_["estimate_test_score"][index] == pytest.approx(expected.f1, abs=1e-9)


def test_text_pipeline_and_pos_label():
    rng = np.random.default_rng(3)
    sport = ["goal", "match", "team", "score", "league", "coach"]
    money = ["bank", "rate", "market", "stock", "profit", "loan"]
    common = ["the", "a", "today", "said", "new", "year", "report", "people"]
    docs, labels = [], []
    for i in range(120):
        topic = sport if i % 3 else money
        words = list(rng.choice(topic, 4)) + list(rng.choice(common, 6)) + list(rng.choice(sport + money, 2))
        docs.append(" ".join(words))
        labels.append("sport" if i % 3 else "money")
    pipeline = make_pipeline(TfidfVectorizer(), SVC(kernel="linear"))
    search = XiAlphaSearchCV(
        pipeline,
        {"svc__C": [0.1, 1.0, 10.0], "tfidfvectorizer__sublinear_tf": [False, True]},
        scoring="f1",
        pos_label="money",
    ).fit(docs, labels)
    assert search.pos_label_ == "money" and list(search.classes_) == ["money", "sport"]
    assert len(search.cv_results_["params"]) == 6
    assert search.cv_results_["param_tfidfvectorizer__sublinear_tf"].shape == (6,)
    assert search.best_score_ > 0.8
    assert search.score(docs, labels) > 0.9
    assert set(search.predict(["bank loan rate market", "goal team coach match"])) == {"money", "sport"}
    # recall of "money" and of "sport" are different numbers: pos_label is honoured
    other = XiAlphaSearchCV(pipeline, {"svc__C": [1.0]}, scoring="recall", pos_label="sport").fit(docs, labels)
    money = XiAlphaSearchCV(pipeline, {"svc__C": [1.0]}, scoring="recall", pos_label="money").fit(docs, labels)
    # the same examples are flagged; what counts as positive swaps with pos_label
    assert other.cv_results_["xa_d_pos"][0] == money.cv_results_["xa_d_neg"][0]
    assert other.cv_results_["xa_d_neg"][0] == money.cv_results_["xa_d_pos"][0]
    assert other.cv_results_["xa_recall"][0] != money.cv_results_["xa_recall"][0]


def test_the_search_says_what_it_did_instead_of_folds():
    """Issue 49.5: n_splits_ and refit_time_ were missing and cv_results_ had no split columns, and
    nothing said that mean_test_score is a C-neighbour-smoothed estimate."""
    X, y, X_test, _ = toy_problem(seed=5)
    labels = np.where(y == 1, "yes", "no")  # the user's own labels
    grid = {"C": [0.1, 1.0, 10.0]}
    search = XiAlphaSearchCV(SVC(kernel="linear"), grid).fit(X[:120], labels[:120])
    assert search.n_splits_ == 1
    assert isinstance(search.refit_time_, float) and search.refit_time_ > 0
    reference = GridSearchCV(SVC(kernel="linear"), grid, cv=2).fit(X[:120], labels[:120])
    # every key of GridSearchCV's cv_results_ for its n_splits_ splits, for ours
    wanted = {key for key in reference.cv_results_ if not key.startswith("split") or key.startswith("split0_")}
    assert wanted <= set(search.cv_results_)
    results = search.cv_results_
    assert list(results["test_score_estimate"]) == ["span"] * 3 and list(results["test_score_smoothed"]) == [True] * 3
    np.testing.assert_array_equal(results["split0_test_score"], results["estimate_test_score"])
    assert (results["mean_score_time"] > 0).all() and (results["std_fit_time"] == 0).all()
    alone = XiAlphaSearchCV(SVC(kernel="linear"), grid, estimate="xa", smooth=False).fit(X[:120], labels[:120])
    np.testing.assert_array_equal(alone.cv_results_["mean_test_score"], alone.cv_results_["split0_test_score"])
    assert list(alone.cv_results_["test_score_estimate"]) == ["xa"] * 3
    assert not alone.cv_results_["test_score_smoothed"].any()
    assert set(search.predict(X_test)) == {"yes", "no"} and list(search.classes_) == ["no", "yes"]


def test_every_parameter_is_declared_and_checked_as_scikit_learn_checks_them():
    """scikit-learn's own check of `_parameter_constraints`: a constraint per parameter, and fit raises
    InvalidParameterError in scikit-learn's words for a value of the wrong type or out of range."""
    from sklearn.utils.estimator_checks import check_param_validation

    check_param_validation("XiAlphaSearchCV", XiAlphaSearchCV(SVC(), {"C": [1.0]}))


def test_the_readme_example_is_the_linear_text_pipeline_and_runs():
    """Issue 49.5: the README's example searched SVC()'s RBF kernel, 10 times slower and less accurate on text."""
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    (example,) = [
        block for block in re.findall(r"```python\n(.*?)```", readme, flags=re.S) if "XiAlphaSearchCV(" in block
    ]
    assert "LinearSVC(" in example and "SVC()" not in example
    rng = np.random.default_rng(6)
    texts = [" ".join(rng.choice(["win", "cash", "now"] if i % 2 else ["see", "you", "soon"], 5)) for i in range(60)]
    labels = ["spam" if i % 2 else "ham" for i in range(60)]
    namespace = {"texts": texts, "labels": labels}
    exec(compile(example, "README.md", "exec"), namespace)
    search = namespace["search"]
    assert search.predict(["cash now win"]) == ["spam"] and search.n_splits_ == 1


def test_lazy_export_from_the_package():
    assert xialpha.XiAlphaSearchCV is XiAlphaSearchCV


def test_bad_input_gets_clear_errors():
    X, y, _, _ = toy_problem()
    with pytest.raises(ValueError, match="Only binary classification is supported .* got 3 classes"):
        XiAlphaSearchCV(SVC(), {"C": [1.0]}).fit(X[:30], np.arange(30) % 3)
    with pytest.raises(
        TypeError,
        match="estimator: must be sklearn.svm.SVC, LinearSVC or a Pipeline ending in one, got LogisticRegression",
    ):
        XiAlphaSearchCV(LogisticRegression(), {"C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="estimator: LinearSVC must have loss='hinge'.*'loss': 'squared_hinge'"):
        XiAlphaSearchCV(LinearSVC(), {"C": [1.0]}).fit(X, y)
    with pytest.raises(ValueError, match="^scoring: The 'scoring' parameter of XiAlphaSearchCV must be a str among"):
        XiAlphaSearchCV(SVC(), {"C": [1.0]}, scoring="roc_auc").fit(X, y)
    with pytest.raises(
        ValueError, match=r"^estimate: The 'estimate' parameter .* Got 'spam' instead\. Did you mean span\?$"
    ):
        XiAlphaSearchCV(SVC(), {"C": [1.0]}, estimate="spam").fit(X, y)
    with pytest.raises(ValueError, match=r"^rho: The 'rho' parameter .* must be a float in the range \(0.0, inf\)"):
        XiAlphaSearchCV(SVC(), {"C": [1.0]}, rho=0).fit(X, y)
    with pytest.raises(ValueError, match="pos_label: 7 is not one of the classes"):
        XiAlphaSearchCV(SVC(), {"C": [1.0]}, pos_label=7).fit(X, y)
    # issue 48.9: [1] in classes compared element-wise and was accepted
    with pytest.raises(TypeError, match=r"pos_label: must be one class label \(a number or a string\), got \[1\]"):
        XiAlphaSearchCV(SVC(), {"C": [1.0]}, pos_label=[1]).fit(X, y)


@pytest.mark.parametrize("estimate", ["span", "xa"])
def test_column_vector_y_gives_the_same_estimates_as_1d_y(estimate):
    # y of shape (n, 1) once broadcast xi to (n, n): xa_error came out as 42 instead of 0.4
    from sklearn.exceptions import DataConversionWarning

    X, y, _, _ = toy_problem(seed=4)
    flat = XiAlphaSearchCV(SVC(), {"C": [0.3, 3.0]}, estimate=estimate).fit(X, y)
    with pytest.warns(DataConversionWarning):
        column = XiAlphaSearchCV(SVC(), {"C": [0.3, 3.0]}, estimate=estimate).fit(X, y[:, None])
    for name in ("xa_error", "xa_d_pos", "xa_d_neg", f"{estimate}_error", "mean_test_score"):
        np.testing.assert_array_equal(column.cv_results_[name], flat.cv_results_[name])
    assert 0 <= column.cv_results_["xa_error"].max() <= 1


@pytest.mark.parametrize(
    "make",
    [lambda: SVC(kernel="linear", class_weight={1: 2.0}), lambda: LinearSVC(loss="hinge", class_weight={1: 2.0})],
)
def test_linear_candidates_are_scored_on_the_linear_path(make, monkeypatch):
    # SVC(kernel="linear") and LinearSVC(loss="hinge") are scored by xialpha's solver on the
    # features (warm-started along C), with the estimates of fit_svm on the features at each C and j = 2,
    # and never through a Gram matrix; only the chosen candidate is fitted by scikit-learn.
    import xialpha.features.gram as gram_module

    X, y, X_test, _ = toy_problem(seed=5)
    monkeypatch.setattr(gram_module, "linear_gram", lambda *a, **k: pytest.fail("a Gram matrix was built"))
    grid = [0.01, 0.1, 1.0, 10.0]
    search = XiAlphaSearchCV(make(), {"C": grid}, scoring="f1").fit(X, y)
    y_pm = np.where(y == 1, 1, -1)
    for index, C in enumerate(grid):
        fit = fit_svm(TrainingProblem(y_pm, X=X), SVMParameters(C, j=2.0, tol=1e-3))
        assert search.cv_results_["span_f1"][index] == pytest.approx(span_estimate(fit).f1, abs=0.02)
        assert search.cv_results_["xa_f1"][index] == pytest.approx(
            xi_alpha(fit.alpha, fit.xi, y_pm, r_delta_squared(X=X)).f1, abs=0.02
        )
    best = search.best_estimator_
    assert type(best) is type(make()) and best.C == search.best_params_["C"]
    np.testing.assert_array_equal(search.predict(X_test), best.predict(X_test))


@pytest.mark.parametrize(
    "make",
    [
        lambda: SVC(kernel="rbf", gamma="scale", class_weight={1: 2.0}),
        lambda: SVC(kernel="poly", gamma="auto", degree=2, coef0=1.0, class_weight="balanced"),
        lambda: SVC(kernel="linear"),
    ],
)
def test_scores_are_what_the_shared_scoring_function_gives_for_the_same_fit(make):
    # the search and a sweep's tasks score by one function: the same fit_svm training scored by
    # one_fit_estimates gives every column of cv_results_ to the last digit
    from sklearn.utils.class_weight import compute_class_weight

    from xialpha.estimators.scoring import one_fit_estimates
    from xialpha.search import resolved_gamma

    X, y, _, _ = toy_problem(seed=6)
    svc, grid = make(), [0.1, 1.0, 10.0]
    search = XiAlphaSearchCV(svc, {"C": grid}, scoring="f1", rho=2.0).fit(X, y)
    y_pm = np.where(y == 1, 1, -1)
    w_neg, w_pos = compute_class_weight(svc.class_weight, classes=np.array([0, 1]), y=y)
    params = None
    if svc.kernel != "linear":
        params = {"gamma": resolved_gamma(svc.gamma, X)} | (
            {"degree": svc.degree, "coef0": svc.coef0} if svc.kernel == "poly" else {}
        )
        assert params["gamma"] == pytest.approx(SVC(gamma=svc.gamma).fit(X, y)._gamma, rel=1e-12)
    problem = TrainingProblem(y_pm, X=X, kernel=svc.kernel, kernel_params=params)
    r2 = r_delta_squared(X=X, kernel=svc.kernel, kernel_params=params)
    previous = None
    for index, C in enumerate(grid):
        parameters = SVMParameters(C * w_neg, j=w_pos / w_neg, tol=svc.tol)
        fit = fit_svm(problem, parameters, warm_start=previous)
        previous = fit if svc.kernel == "linear" else None  # the linear path warm-starts along C
        estimates = one_fit_estimates(fit, problem, parameters, r2, rhos=(2.0,))
        for method in ("span", "xa"):
            expected = estimates.get(method)
            assert search.cv_results_[f"{method}_d_pos"][index] == expected.d_pos
            assert search.cv_results_[f"{method}_d_neg"][index] == expected.d_neg
        assert search.cv_results_["estimate_test_score"][index] == estimates.get("span").f1
        assert search.cv_results_["n_support"][index] == fit.n_sv
        assert search.cv_results_["r_delta2"][index] == r2


class NoPrivateReadsSVC(SVC):
    """An SVC that records every private attribute xialpha's code reads from it."""

    reads: list = []

    def __getattribute__(self, name):
        import sys

        if name.startswith("_") and not name.startswith("__"):
            caller = sys._getframe(1).f_globals.get("__name__", "")
            if caller.startswith("xialpha"):
                NoPrivateReadsSVC.reads.append(f"{caller} read {name}")
        return super().__getattribute__(name)


@pytest.mark.parametrize(
    "params",
    [
        {"kernel": "rbf"},
        {"kernel": "poly", "gamma": "auto", "degree": 2},
        {"kernel": "linear", "class_weight": "balanced"},
    ],
)
def test_the_search_reads_no_private_svc_attribute(params, monkeypatch):
    # scikit-learn's private fitted state (_gamma, _sparse, ...) may change between releases: the
    # search uses only the estimator's public parameters, and still chooses as before
    monkeypatch.setattr(NoPrivateReadsSVC, "reads", [])
    X, y, X_test, _ = toy_problem(seed=7)
    guarded = XiAlphaSearchCV(NoPrivateReadsSVC(**params), {"C": [0.1, 1.0, 10.0]}).fit(X, y)
    assert NoPrivateReadsSVC.reads == []
    plain = XiAlphaSearchCV(SVC(**params), {"C": [0.1, 1.0, 10.0]}).fit(X, y)
    assert guarded.best_params_ == plain.best_params_
    np.testing.assert_array_equal(guarded.cv_results_["mean_test_score"], plain.cv_results_["mean_test_score"])
    assert type(guarded.best_estimator_) is NoPrivateReadsSVC
    np.testing.assert_array_equal(guarded.predict(X_test), plain.predict(X_test))


def test_candidates_are_ranked_by_their_estimate_averaged_with_their_C_neighbours():
    """mean_test_score averages each estimate with those of the next smaller and next larger C of the
    candidates that differ only in C (here per gamma); smooth=False ranks by the estimates alone."""
    X, y, _, _ = toy_problem(seed=4)
    grid = {"C": [0.03, 0.3, 3.0, 30.0], "gamma": [0.05, 0.5]}
    smoothed = XiAlphaSearchCV(SVC(kernel="rbf"), grid, scoring="f1").fit(X, y)
    alone = XiAlphaSearchCV(SVC(kernel="rbf"), grid, scoring="f1", smooth=False).fit(X, y)
    own = smoothed.cv_results_["estimate_test_score"]
    np.testing.assert_array_equal(own, alone.cv_results_["mean_test_score"])
    np.testing.assert_array_equal(own, alone.cv_results_["estimate_test_score"])
    params = smoothed.cv_results_["params"]

    def line_of(i):
        return [k for _, k in sorted((q["C"], k) for k, q in enumerate(params) if q["gamma"] == params[i]["gamma"])]

    def near_mean(i):
        line = line_of(i)
        at = line.index(i)
        return np.mean([own[k] for k in line[max(0, at - 1) : at + 2]])

    for i in range(len(params)):  # a plateau (adjacent C of equal estimates) shares its best average
        line = line_of(i)
        at = line.index(i)
        start = at
        while start > 0 and own[line[start - 1]] == own[i]:
            start -= 1
        end = at
        while end + 1 < len(line) and own[line[end + 1]] == own[i]:
            end += 1
        expected = max(near_mean(k) for k in line[start : end + 1])
        assert smoothed.cv_results_["mean_test_score"][i] == pytest.approx(expected)
    best = int(np.argmax(smoothed.cv_results_["mean_test_score"]))
    assert smoothed.best_index_ == best and smoothed.best_params_ == params[best]
    assert smoothed.best_score_ == pytest.approx(smoothed.cv_results_["mean_test_score"][best])
    assert smoothed.cv_results_["rank_test_score"][best] == 1
    assert alone.best_index_ == int(np.argmax(own))
    with pytest.raises(ValueError, match="^smooth: The 'smooth' parameter .* must be an instance of 'bool'"):
        XiAlphaSearchCV(SVC(), {"C": [1.0]}, smooth="yes").fit(X, y)


def test_without_a_C_grid_the_search_climbs_a_C_ladder_from_the_data_until_its_choice_is_interior():
    from xialpha.estimators.c_ladder import starting_C
    from xialpha.spec.grid import AUTO_C_FACTOR, AUTO_C_START

    X, y = make_classification(n_samples=300, n_features=20, n_informative=5, random_state=0, flip_y=0.05)
    search = XiAlphaSearchCV(SVC(kernel="linear"), scoring="f1").fit(X, y)
    C = [params["C"] for params in search.cv_results_["params"]]
    assert C[:AUTO_C_START] == [starting_C(X, np.where(y == 1, 1, -1)) * AUTO_C_FACTOR**i for i in range(AUTO_C_START)]
    assert len(C) > AUTO_C_START  # the first rung's best sat at its edge: the ladder grew
    ladder = sorted(C)
    assert all(b / a == pytest.approx(AUTO_C_FACTOR) for a, b in zip(ladder, ladder[1:]))
    assert ladder[0] < search.best_params_["C"] < ladder[-1]  # interior
    grid = XiAlphaSearchCV(SVC(kernel="linear"), {"C": C}, scoring="f1").fit(X, y)  # the same C as a grid
    assert grid.best_params_ == search.best_params_
    np.testing.assert_array_equal(grid.cv_results_["mean_test_score"], search.cv_results_["mean_test_score"])


def test_C_auto_in_a_grid_gives_each_other_setting_a_ladder_and_other_strings_are_refused():
    X, y = make_classification(n_samples=200, n_features=10, random_state=1)
    search = XiAlphaSearchCV(
        make_pipeline(StandardScaler(), SVC(kernel="rbf")), {"svc__C": "auto", "svc__gamma": [0.01, 0.1]}
    ).fit(X, y)
    gammas = [params["svc__gamma"] for params in search.cv_results_["params"]]
    assert set(gammas) == {0.01, 0.1} and all(gammas.count(gamma) >= 4 for gamma in (0.01, 0.1))
    with pytest.raises(ValueError, match=r'^param_grid: C must be a list of numbers or "auto", got \'big\''):
        XiAlphaSearchCV(SVC(), {"C": "big"}).fit(X, y)


DOCUMENTS = [f"word{i % 3} other{i}" for i in range(300)]
TEXT_SEARCH = make_pipeline(TfidfVectorizer(), LinearSVC(loss="hinge"))
# (estimator, param_grid, what X and y become, the start of the error): each found before any fit
HOSTILE_SEARCHES = {
    "empty grid": (SVC(), [], None, "param_grid: is an empty list"),
    "empty C list": (SVC(), {"C": []}, None, "param_grid: C is an empty list"),
    "auto inside a C list": (
        SVC(),
        {"C": [1.0, "auto"]},
        None,
        "param_grid: C must be a list of numbers > 0, got 'auto'",
    ),
    "a C of zero": (SVC(), {"C": [0.0, 1.0]}, None, "param_grid: C must be a list of numbers > 0, got 0.0"),
    "one C not in a list": (SVC(), {"C": 0.5}, None, "param_grid: C must be a list of values, got 0.5"),
    "no such parameter": (
        SVC(),
        {"gama": [0.1]},
        None,
        "param_grid: 'gama' is not a parameter of SVC; did you mean gamma?",
    ),
    "a grid that is no dict": (SVC(), [{"C": [1.0]}, 5], None, "param_grid[1]: must be a dict"),
    "a gamma of text": (SVC(kernel="rbf"), {"C": [1.0], "gamma": ["x"]}, None, "param_grid: gamma: must be a number"),
    "a pipeline's C": (TEXT_SEARCH, {"linearsvc__C": [1.0, -2.0]}, "text", "param_grid: linearsvc__C must be"),
    "a pipeline's class weight": (
        TEXT_SEARCH,
        {"linearsvc__class_weight": [{0: -1}]},
        "text",
        "param_grid: linearsvc__class_weight: must be",
    ),
    "the estimator's own degree": (SVC(kernel="poly", degree=-1), {"C": [1.0]}, None, "estimator: degree: must be"),
    "y of two columns": (SVC(), {"C": [1.0]}, "y 2-D", "y: must be 1-D class labels"),
    "y missing": (SVC(), {"C": [1.0]}, "y None", "y: XiAlphaSearchCV requires y"),
    "y of real numbers": (SVC(), {"C": [1.0]}, "y real", "y: must be 1-D class labels"),
    "X of strings": (SVC(), {"C": [1.0]}, "text", "X: holds text, not numbers: vectorise it first"),
    "X with NaN": (SVC(), {"C": [1.0]}, "X NaN", "X: must be an array or sparse matrix of numbers"),
    "X missing": (SVC(), {"C": [1.0]}, "X None", "X: is required"),
    "X shorter than y": (SVC(), {"C": [1.0]}, "X short", "X, y: Found input variables with inconsistent numbers"),
    "a pipeline's X one string": (
        TEXT_SEARCH,
        {"linearsvc__C": [1.0]},
        "X str",
        "X: must be a list or array of samples",
    ),
    "a precomputed kernel not square": (
        SVC(kernel="precomputed"),
        {"C": [1.0]},
        None,
        "X: a precomputed kernel must be",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE_SEARCHES), ids=list(HOSTILE_SEARCHES))
def test_fit_checks_its_inputs_before_fitting_and_names_the_parameter(case, monkeypatch):
    """Issue 42 item 6: fit passed library errors through unnamed ("attempt to get argmin of an empty
    sequence" for an empty grid, "can't multiply sequence by non-int of type 'float'" for "auto" in a
    C list, "y should be a 1d array", "could not convert string to float"), some after fitting."""
    estimator, grid, data, start = HOSTILE_SEARCHES[case]
    X, y, _, _ = toy_problem()
    X, y = {
        None: (X, y),
        "text": (DOCUMENTS, y),
        "y 2-D": (X, np.c_[y, y]),
        "y None": (X, None),
        "y real": (X, y + 0.5 * np.arange(len(y))),
        "X NaN": (np.where(X > 2, np.nan, X), y),
        "X None": (None, y),
        "X short": (X[:200], y),
        "X str": ("one document", y),
    }[data]

    def no_fit(*args, **kwargs):
        raise AssertionError("a candidate was fitted before the inputs were checked")

    monkeypatch.setattr("xialpha.search.fit_svm", no_fit)
    with pytest.raises((ValueError, TypeError)) as raised:
        XiAlphaSearchCV(estimator, grid).fit(X, y)
    assert str(raised.value).startswith(start), str(raised.value)
    assert "\n" not in str(raised.value)
