"""Configuration labels (`xialpha.reports.labels`) on hand-built sweeps (the commands that show
them are tested in test_selection_cli)."""

from __future__ import annotations

import re

import pandas as pd

from xialpha.reports.labels import sweep_labels

PP = {
    "pp_lowercase": True,
    "pp_token_pattern": r"(?u)\b\w\w+\b",
    "pp_stop_words": "none",
    "pp_stemming": "none",
    "pp_min_df": 1.0,
    "pp_max_df": 1.0,
    "pp_tf": "raw",
    "pp_idf": "log",
    "pp_norm": "l2",
}
HASH = re.compile(r"\b[0-9a-f]{8,}\b")


def config(pp_id="a1b2c3d4e5f60718", kernel_id="9f8e7d6c5b4a3928", C=1.0, j=1.0, kernel="linear", **params):
    """One results row: preprocessing and kernel ids (hashes, as in a store), their parameters, C and j."""
    pp = {**PP, **{k: v for k, v in params.items() if k.startswith("pp_")}}
    kernel_params = {
        "gamma": None,
        "degree": None,
        "coef0": None,
        **{k: v for k, v in params.items() if not k.startswith("pp_")},
    }
    return {
        "category": "c",
        "preprocessing_id": pp_id,
        **pp,
        "kernel": kernel,
        "kernel_id": kernel_id,
        **kernel_params,
        "C": C,
        "j": j,
    }


def labels_of(*rows):
    results = pd.DataFrame(rows)
    labels = sweep_labels(results)
    return labels, [labels.of_row(row) for _, row in results.iterrows()]


def test_a_sweep_differing_only_in_C_is_labelled_by_C():
    _, names = labels_of(config(C=0.1), config(C=1.0), config(C=10.0))
    assert names == ["C=0.1", "C=1", "C=10"]


def test_a_sweep_differing_in_preprocessing_names_the_parameters_that_differ():
    labels, names = labels_of(
        config(pp_id="1111aaaa2222bbbb", C=1.0, pp_stemming="porter", pp_idf="none"),
        config(pp_id="3333cccc4444dddd", C=1.0, pp_stemming="none", pp_idf="log"),
        config(pp_id="5555eeee6666ffff", C=1.0, pp_stemming="porter", pp_idf="log"),
    )
    assert names == ["stemming=porter idf=none", "stemming=none idf=log", "stemming=porter idf=log"]
    key = labels.key(pd.DataFrame([config(pp_id="1111aaaa2222bbbb")])).set_index("label")
    assert "stemming=porter" in key.loc["stemming=porter idf=none", "parameters"]
    assert "min_df=1 " in key.loc["stemming=porter idf=none", "parameters"]  # every parameter, as the spec spells it
    # a fraction keeps its point: max_df=1 would read as "in at most one document"
    assert "max_df=1.0 " in key.loc["stemming=porter idf=none", "parameters"]


def test_a_sweep_differing_in_kernels_names_kernel_and_parameter_with_C_and_j():
    _, names = labels_of(
        config(kernel_id="k1", kernel="linear", C=0.5, j=1.0),
        config(kernel_id="k2", kernel="rbf", gamma=0.5, C=0.5, j=2.0),
        config(kernel_id="k3", kernel="rbf", gamma=1.0, C=2.0, j=2.0),
    )
    assert names == ["linear C=0.5 j=1", "rbf gamma=0.5 C=0.5 j=2", "rbf gamma=1 C=2 j=2"]


def test_labels_stay_unique_where_parameters_would_collide():
    labels, names = labels_of(
        config(C=1.0),
        config(C=1.00001),  # equal at 4 significant digits: more digits
        config(pp_id="twin-one", C=1.0),
        config(pp_id="twin-two", C=1.0),  # same stored parameters, other ids
    )
    assert names == ["pp#1 C=1", "pp#1 C=1.00001", "pp#2 C=1", "pp#3 C=1"]  # pp#: in id order


def test_group_labels_leave_out_C_and_fall_back_to_the_kernel_name():
    labels, _ = labels_of(config(C=0.1), config(C=1.0))
    assert labels.group("a1b2c3d4e5f60718", "9f8e7d6c5b4a3928", 1.0) == "linear"
