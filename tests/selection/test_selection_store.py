"""`xialpha select` on a hand-built real store: micro vs macro, ties, stored indicators."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy import stats

from xialpha.cli import main
from xialpha.estimators.metrics import Estimate
from xialpha.selection.objective import Objective
from xialpha.selection.selector import select as select_rows
from xialpha.storage.opening import open_store
from xialpha.storage.schema import estimate_values


def row(category, pp, C, d_pos, d_neg, n_pos, *, n=1000, n_sv=50):
    return {
        "sweep_id": "hand",
        "run_id": "r",
        "status": "ok",
        "data_fingerprint": "fp",
        "config_key": f"{category}-{pp}-{C}",
        "category": category,
        "preprocessing_id": pp,
        "kernel": "linear",
        "kernel_id": "lin",
        "C": float(C),
        "j": 1.0,
        "rho": 1.0,
        "n": n,
        "n_pos": n_pos,
        "n_sv": n_sv,
        **estimate_values(Estimate("xa", n, n_pos, d_pos, d_neg)),
        "xa_d": d_pos + d_neg,
    }


def indicator(d_pos, d_neg, n_pos, n=1000, shift=0):
    """Errors on the first d_pos positives (examples 0..n_pos-1) and d_neg negatives, from `shift`."""
    vector = np.zeros(n, dtype=bool)
    vector[shift : shift + d_pos] = True
    vector[n_pos + shift : n_pos + shift + d_neg] = True
    return vector


@pytest.fixture
def store_uri(tmp_path):
    # Config A is better on the rare category, B on the frequent one: by hand (F1 = 2TP / (2 n_pos - d_pos + d_neg))
    # A: big 140/200 = 0.70, rare 18/20 = 0.90 -> macro 0.80, micro (TP 79 of 110) 158/220
    # B: big 180/200 = 0.90, rare 8/20 = 0.40 -> macro 0.65, micro (TP 94) 188/220.
    # C=1 and C=10 of config T tie everywhere (same counts): the smaller C must win.
    specs = [
        ("big", "A", 1, 30, 30, 100),
        ("rare", "A", 1, 1, 1, 10),
        ("big", "B", 1, 10, 10, 100),
        ("rare", "B", 1, 6, 6, 10),
        ("big", "T", 10, 60, 60, 100),
        ("rare", "T", 10, 8, 8, 10),
        ("big", "T", 1, 60, 60, 100),
        ("rare", "T", 1, 8, 8, 10),
    ]
    store = open_store(str(tmp_path / "store"), create=True, writable=True)
    store.datasets.write_results([row(*spec) for spec in specs])
    store.datasets.write_examples(
        [
            {
                "sweep_id": "hand",
                "config_key": f"{c}-{pp}-{C}",
                "category": c,
                "estimator": "xa",
                "bits": indicator(d_pos, d_neg, n_pos),
            }
            for c, pp, C, d_pos, d_neg, n_pos in specs
        ]
    )
    return str(tmp_path / "store")


def select(capsys, uri, *extra):
    assert main(["select", uri, "--sweep", "hand", "--save", *extra]) == 0
    out = capsys.readouterr().out
    selection_id = re.search(r"^stored selection (\S+)", out, re.MULTILINE).group(1)
    table = open_store(uri, create=True, writable=True).datasets.read(
        "selections", filters=[("selection_id", "=", selection_id)]
    )
    return table.to_pandas().set_index("category").sort_index()


def test_macro_and_micro_averages_choose_different_shared_configs(store_uri, capsys):
    macro = select(capsys, store_uri, "--global", "--average", "macro")
    assert set(macro["preprocessing_id"]) == {"A"}
    assert macro["selection_value"].iloc[0] == pytest.approx(0.80)
    assert set(macro["runner_up_preprocessing_id"]) == {"B"}
    micro = select(capsys, store_uri, "--global", "--average", "micro")
    assert set(micro["preprocessing_id"]) == {"B"}
    assert micro["selection_value"].iloc[0] == pytest.approx(188 / 220)
    assert micro["runner_up_selection_value"].iloc[0] == pytest.approx(158 / 220)
    # pooled micro sign test on the stored indicators, chosen B vs runner-up A: on "big" B alone is right on
    # 20 positives + 20 negatives, on "rare" A alone on 5 + 5, so k = 40 of n = 50 discordant decisions
    assert micro["p_micro_sign"].iloc[0] == pytest.approx(stats.binomtest(40, 50, 0.5, alternative="greater").pvalue)
    assert micro["p_macro_sign"].iloc[0] == pytest.approx(0.75)  # B higher on 1 of 2 categories
    assert micro["significant"].iloc[0]


def test_ties_go_to_the_smaller_C_and_identical_outcomes_are_not_significant(store_uri):
    store = open_store(store_uri, create=True, writable=True)
    results = store.read_results_df("hand")
    tied = results[results["preprocessing_id"] == "T"]
    selection = select_rows(tied, Objective("f1", estimator="xa"), sweep_id="hand", load_indicators=store.read_examples)
    for _, row in selection.rows.iterrows():
        assert row["C"] == 1.0 and selection.runners_up_of(row["category"])["C"].tolist() == [10.0]
        assert row["p_micro_sign"] == 1.0 and not row["significant"]  # no discordant decision: p 1
