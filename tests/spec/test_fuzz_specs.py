"""Generated sweep specs, valid and broken, through `xialpha sweep SPEC --dry-run`: every one ends
with exit 0 or 2, one line and no traceback, within the time bound, and the store unchanged.

Each case starts from a small valid spec, sets up to three keys to hostile values (integers beyond
64 bits, inf, nan, wrong types, lists, tables, dates), deletes keys or adds unknown ones, may grow
the C x j grid past max_configs, and may corrupt the file's bytes (cut short, NUL, 0xff, ...).
"""

from __future__ import annotations

import copy

from fuzzing import FUZZ_SETTINGS, check_outcome, corrupt, hostile, no_debug, run_cli, store, toml_dumps  # noqa: F401 (fixtures)
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from swept import tree_digest

BASE = {
    "sweep": {"id": "fuzz"},
    "corpus": {
        "loader": "synthetic",
        "n_docs": 40,
        "n_categories": 2,
        "seed": 3,
        "vocabulary_size": 200,
        "topic_words": 5,
        "train_split": "train",
    },
    "preprocessing": [{"min_df": 1}],
    "kernels": [{"name": "linear"}],
    "svm": {"C": [1.0]},
    "estimators": {"rho": [1.0]},
    "cluster": {"workers": 1},
}
KEYS = {
    "sweep": ["id", "store", "metric", "estimator", "batch_size", "gram_memory_limit", "max_configs"],
    "corpus": [
        "loader",
        "n_docs",
        "n_categories",
        "seed",
        "vocabulary_size",
        "mean_length",
        "topic_words",
        "signal",
        "max_prevalence",
        "category_skew",
        "test_fraction",
        "start",
        "n_batches",
        "shift",
        "shift_batch",
        "shift_width",
        "shifted_categories",
        "train_split",
        "test_split",
        "path",
        "categories",
    ],
    "preprocessing": ["lowercase", "token_pattern", "stop_words", "stemming", "min_df", "max_df", "tf", "idf", "norm"],
    "kernels": ["name", "gamma", "degree", "coef0"],
    "svm": ["C", "j", "tol"],
    "estimators": ["rho", "span", "xa_ext_depth", "exact_loo", "loo_prune", "holdout", "kfold", "bootstrap"],
    "cluster": ["kind", "address", "workers", "max_workers", "threads_per_worker", "memory_limit", "security", "queue"],
}
# values of the right kind, often valid, so that cases also get past validation into loading and planning
plausible = st.one_of(
    st.integers(-2, 60),
    st.floats(-1, 100),
    st.lists(st.floats(0.01, 100), min_size=1, max_size=3),
    st.sampled_from(
        [
            "linear",
            "rbf",
            "poly",
            "sigmoid",
            "porter",
            "english",
            "none",
            "log",
            "smooth",
            "binary",
            "l2",
            "f1",
            "error",
            "xa",
            "span",
            "loo",
            "kfold",
            "train",
            "test",
            "gradual",
            "abrupt",
            "2001-05-06",
            "2GiB",
            "local",
            "slurm",
            "support",
        ]
    ),
)
# values that are valid but make a synthetic corpus slow to generate (seconds, not a hang): left out here
_SLOW = {"n_docs": (5_000, 1_250_000), "vocabulary_size": (20_000, 10**7), "mean_length": (500, 10**8)}


@st.composite
def specs(draw) -> bytes:
    document = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(0, 3), label="mutations")):
        section = draw(st.sampled_from(sorted(KEYS)), label="section")
        table = document.setdefault(section, [{}] if section in ("preprocessing", "kernels") else {})
        if isinstance(table, list):
            table = table[0] if table and isinstance(table[0], dict) else {}
        if not isinstance(table, dict):
            continue
        action = draw(st.sampled_from(["set"] * 8 + ["delete", "delete", "unknown", "table"]), label="action")
        key = draw(st.sampled_from(KEYS[section]), label="key")
        if action == "set":
            value = draw(st.one_of(hostile, plausible), label=f"{section}.{key}")
            low_high = _SLOW.get(key)
            assume(not (low_high and isinstance(value, (int, float)) and low_high[0] < value <= low_high[1]))
            table[key] = value
        elif action == "delete":
            table.pop(key, None)
        elif action == "unknown":
            table[draw(st.text(min_size=1, max_size=8), label="unknown key")] = draw(hostile, label="unknown value")
        else:
            document[section] = draw(hostile, label=f"{section} replaced")
    if draw(st.booleans(), label="grow grid"):
        sizes = st.sampled_from([1, 2, 5, 400, 2000])
        document["svm"] = {
            "C": [float(i + 1) for i in range(draw(sizes, label="C"))],
            "j": [float(i + 1) for i in range(draw(sizes, label="j"))],
        }
    try:
        text = toml_dumps(document)
    except (TypeError, ValueError):  # a value TOML cannot hold (a list mixing tables and values)
        text = toml_dumps(BASE)
    return text


@settings(FUZZ_SETTINGS, max_examples=110)
@given(text=specs(), data=st.data())
def test_generated_specs_dry_run_cleanly(text, data, store, tmp_path_factory, no_debug):
    spec = tmp_path_factory.mktemp("spec") / "spec.toml"
    spec.write_bytes(corrupt(text, data))
    before = tree_digest(store)
    outcome = run_cli(["sweep", str(spec), "--store", str(store), "--dry-run"])
    check_outcome(outcome, before, tree_digest(store))
    event(f"exit {outcome.code}: " + " ".join(outcome.err.split(":")[2:3]).strip()[:40])
    assert outcome.code in (0, 2), outcome.err
