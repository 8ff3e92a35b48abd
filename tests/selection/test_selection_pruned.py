"""[estimators] span_prune (issue 47): a C path makes span's exact calls only for the configurations a
selection may need; a selection by the metric it names, per category, smoothed or not, with up to
RUNNERS_UP runners-up, chooses, ranks and tests exactly as the full computation; a selection the
bounds could change refuses, naming span_prune; bounded rows never hold an estimate or a vector."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from threadpoolctl import threadpool_limits

from xialpha.errors import UserError
from xialpha.estimators.metrics import metrics_from_counts
from xialpha.jobs import tasks
from xialpha.planning.plan import make_plan
from xialpha.selection.contenders import PROTECTED_METRICS, needed, protected
from xialpha.selection.objective import Objective
from xialpha.selection.selector import RUNNERS_UP, select
from xialpha.spec.sweep import parse_spec
from xialpha.storage.rows import BatchColumns, result_columns, unpack_bits

SPEC = """
[sweep]
id = "pruned"
[corpus]
loader = "synthetic"
n_docs = 300
n_categories = 3
seed = 5
[corpus.categories]
top_k = 2
[svm]
C = [0.1, 0.3, 1.0, 3.0, 10.0, 30.0]
[estimators]
rho = [1.0]
span_prune = "{prune}"
"""
CONFIG = ["category", "config_key", "preprocessing_id", "C", "j"]
COMPARED = [*CONFIG, "value", "selection_value", "n_runners_up", "n_runners_up_tested", "significant"]
RUNNER_UP_COMPARED = [*CONFIG, "value", "selection_value", "p_micro_sign", "p_mcnemar", "p_proportion"]


def _sweep(prune: str) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """The result rows and span's per-example vectors of SPEC, as a sweep's tasks compute them."""
    spec = parse_spec(SPEC.format(prune=prune))
    corpus = spec.corpus.load()
    categories = sorted({label for labels in corpus.labels for label in labels})[:2]
    plan = make_plan(spec, categories, "f", 0, 0, set(), threads=1)
    features = tasks.vectorize(corpus, spec.preprocessings[0], spec.corpus.train_split, None, categories)
    data = tasks.training_data(features, spec.kernels[0], False, None)
    columns = BatchColumns.of(spec.id, "run", "f", spec.preprocessings[0], spec.kernels[0])
    rows, vectors = [], {}
    with threadpool_limits(1):  # as on a sweep's workers
        for batch in plan.batches:
            assert batch.whole_path
            batch_rows, examples = tasks.fit_batch(data, batch, columns, spec.estimators, spec.tol)
            rows.extend(map(result_columns, batch_rows))
            vectors.update({e.config_key: unpack_bits(e.bits, e.n) for e in examples if e.estimator == "span"})
    return pd.DataFrame(rows), vectors


def _choices(results: pd.DataFrame, vectors: dict, objective: Objective, runners_up: int = RUNNERS_UP, **options):
    """The selection's rows and runners-up as records (its configurations, values and p-values)."""
    chosen = select(
        results,
        objective,
        sweep_id="pruned",
        runners_up=runners_up,
        load_indicators=lambda keys: {key: vectors[key] for key in keys if key in vectors},
        **options,
    )
    rows = chosen.rows.sort_values("category")[COMPARED]
    runners = chosen.runners_up.sort_values(["category", "runner_up"])[RUNNER_UP_COMPARED]
    return rows.to_dict("records"), runners.to_dict("records")


def test_a_bounded_row_stores_an_interval_holding_the_estimate_never_an_estimate_nor_a_vector(monkeypatch):
    full, _ = _sweep("off")
    monkeypatch.setattr(tasks, "needed", lambda *args: np.zeros(len(args[2]), dtype=bool))  # nothing needed
    pruned, vectors = _sweep("f1")
    bounded = pruned["span_d_pos_low"].notna().to_numpy()
    assert bounded.any()
    assert pruned.loc[bounded, ["span_d_pos", "span_d_neg", "span_error", "span_f1"]].isna().all().all()
    assert not set(pruned.loc[bounded, "config_key"]) & set(vectors)
    assert pruned.loc[~bounded, "span_d_pos_high"].isna().all()  # exact ones (every call cheap) have no interval
    same = pruned.merge(full, on=CONFIG, suffixes=("", "_full"), validate="one_to_one")
    assert len(same) == len(full)  # the same configurations, under the same keys
    for count in ("d_pos", "d_neg"):
        low, estimate, high = (same.loc[bounded, f"span_{count}{end}"] for end in ("_low", "_full", "_high"))
        assert ((low <= estimate) & (estimate <= high)).all()
        assert (same.loc[~bounded, f"span_{count}"] == same.loc[~bounded, f"span_{count}_full"]).all()
    assert (same["xa_error"] == same["xa_error_full"]).all()


def test_a_pruned_sweep_chooses_and_tests_as_the_full_one():
    (full, full_vectors), (pruned, pruned_vectors) = _sweep("off"), _sweep("f1")
    for smooth in (True, False):
        objective = Objective(metric="f1", smooth=smooth)
        assert _choices(pruned, pruned_vectors, objective) == _choices(full, full_vectors, objective)


def _curves(seed: int) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """Result rows of 3 categories x 2 preprocessings x 9 C with span counts along noisy curves (every
    estimate exact; xi-alpha's the same), and per row the (d_pos, d_neg) range cheap calls might give
    (wider at larger C)."""
    rng = np.random.default_rng(seed)
    rows, low, high = [], [], []
    for category, n_pos in (("a", 60), ("b", 25), ("c", 8)):
        for preprocessing in ("p1", "p2"):
            for step, C in enumerate(2.0 ** np.arange(-4, 5)):
                d_pos = int(np.clip(n_pos * np.exp(-step / 2) + rng.integers(0, 4), 0, n_pos))
                d_neg = int(rng.integers(0, 3 + step))
                width = rng.integers(0, 2 + 3 * step, size=4)
                low.append([max(d_pos - width[0], 0), max(d_neg - width[1], 0)])
                high.append([min(d_pos + width[2], n_pos), d_neg + width[3]])
                metrics = metrics_from_counts(400, n_pos, d_pos, d_neg)
                rows.append(
                    {
                        "category": category,
                        "config_key": f"{category}-{preprocessing}-{step}",
                        "preprocessing_id": preprocessing,
                        "kernel_id": "linear",
                        "C": C,
                        "j": 1.0,
                        "rho": 1.0,
                        "n": 400,
                        "n_pos": n_pos,
                        "n_sv": 100 - step,
                        **{f"{prefix}_d_pos": d_pos for prefix in ("span", "xa")},
                        **{f"{prefix}_d_neg": d_neg for prefix in ("span", "xa")},
                        **{f"{p}_{name}": float(value) for name, value in metrics.items() for p in ("span", "xa")},
                    }
                )
    return pd.DataFrame(rows), np.array(low), np.array(high)


def _pruned(full: pd.DataFrame, low: np.ndarray, high: np.ndarray, metrics: tuple[str, ...]) -> pd.DataFrame:
    """`full` as a pruned sweep stores it: per C path, the rows `needed` leaves bounded hold only their range."""
    pruned = full.copy()
    exact_counts = full[["span_d_pos", "span_d_neg"]].to_numpy()
    for _, path in full.groupby(["category", "preprocessing_id"]):
        at = path.sort_values("C").index.to_numpy()
        path_low, path_high = low[at].copy(), high[at].copy()
        exact = (path_low == path_high).all(axis=1)
        path_low[exact] = path_high[exact] = exact_counts[at][exact]
        while (
            todo := needed(400, int(path["n_pos"].iloc[0]), path_low, path_high, 1 + RUNNERS_UP, metrics) & ~exact
        ).any():
            path_low[todo] = path_high[todo] = exact_counts[at][todo]
            exact |= todo
        bounded = at[~exact]
        for side, counts in (("low", path_low), ("high", path_high)):
            for column, count in enumerate(("d_pos", "d_neg")):
                pruned.loc[bounded, f"span_{count}_{side}"] = counts[~exact, column]
        pruned.loc[bounded, [c for c in full if c.startswith("span_")]] = np.nan
    return pruned


def _vectors(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """Per-example vectors of each row's counts (positives first), as a sweep stores them."""
    vectors = {}
    for row in rows.itertuples():
        vector = np.zeros(row.n, dtype=bool)
        vector[: row.span_d_pos] = True
        vector[row.n_pos : row.n_pos + row.span_d_neg] = True
        vectors[row.config_key] = vector
    return vectors


@pytest.mark.parametrize("span_prune", ["f1", "error", "recall"])
def test_choices_from_rows_left_bounded_are_those_of_the_full_computation(span_prune):
    metrics = protected(span_prune)
    bounded = 0
    for seed in range(2):
        full, low, high = _curves(seed)
        pruned, vectors = _pruned(full, low, high, metrics), _vectors(full)
        kept = {key: vectors[key] for key in pruned.loc[pruned["span_d_pos"].notna(), "config_key"]}
        bounded += int(pruned["span_d_pos_low"].notna().sum())
        for metric in metrics:
            for smooth in (True, False):
                objective = Objective(metric=metric, smooth=smooth)
                assert _choices(pruned, kept, objective) == _choices(full, vectors, objective), (seed, metric, smooth)
    assert bounded > 0  # not vacuous: some rows were left bounded


def test_a_selection_the_bounds_could_change_refuses_naming_span_prune():
    full, low, high = _curves(0)
    pruned = _pruned(full, low, high, ("f1",))
    assert pruned["span_d_pos_low"].notna().any()
    with pytest.raises(UserError, match="span_prune") as shared:
        _choices(pruned, {}, Objective(), per_category=False)
    assert shared.value.parameters == ("per_category",)
    with pytest.raises(UserError, match="span_prune") as deeper:
        _choices(pruned, {}, Objective(), runners_up=len(pruned))
    assert deeper.value.parameters == ("metric", "runners_up")
    _choices(pruned, {}, Objective(estimator="xa"), per_category=False)  # no bound in xi-alpha's rows


def test_protected_metrics():
    assert protected("off") == () and protected("any") == PROTECTED_METRICS and protected("recall") == ("recall",)


def test_a_spec_pruning_for_another_metric_than_its_sweeps_is_refused():
    with pytest.raises(UserError, match='estimators.span_prune.*set it to "f1", "any" or "off"'):
        parse_spec(SPEC.format(prune="error").replace("[sweep]\n", '[sweep]\nmetric = "f1"\n'))
    assert parse_spec(SPEC.format(prune="error").replace("[sweep]\n", '[sweep]\nmetric = "error"\n'))
