"""A store of hand-built results for 20 categories named as 20 Newsgroups' are (the longest, 24
characters), two preprocessings and 8 C, with held-out values: two saved per-category selections,
one certified (`store_rows.certify_by_hand`). Built in this process in well under a second."""

from __future__ import annotations

import numpy as np
from store_rows import certify_by_hand, linear_result, saved_selections

from xialpha.cli import main
from xialpha.estimators.metrics import Estimate
from xialpha.storage.contract import StoreQueries
from xialpha.storage.opening import open_store

NEWSGROUPS = (
    "alt.atheism",
    "comp.graphics",
    "comp.os.ms-windows.misc",
    "comp.sys.ibm.pc.hardware",
    "comp.sys.mac.hardware",
    "comp.windows.x",
    "misc.forsale",
    "rec.autos",
    "rec.motorcycles",
    "rec.sport.baseball",
    "rec.sport.hockey",
    "sci.crypt",
    "sci.electronics",
    "sci.med",
    "sci.space",
    "soc.religion.christian",
    "talk.politics.guns",
    "talk.politics.mideast",
    "talk.politics.misc",
    "talk.religion.misc",
)
C_VALUES = (0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0)


def newsgroup_rows(categories=NEWSGROUPS, sweep_id: str = "r1") -> list[dict]:
    """Results rows: each category x two preprocessings (min_df 1; min_df 2 with English stop words:
    labels as long as a user's) x C_VALUES x rho 1 and 2, with holdout."""
    rng = np.random.default_rng(0)
    rows = []
    for category in categories:
        for min_df in (1, 2):
            for C in C_VALUES:
                d_pos, d_neg = int(rng.integers(5, 40)), int(rng.integers(0, 30))
                held = Estimate("holdout", 500, 50, d_pos // 2, d_neg // 2)
                for rho in (1.0, 2.0):
                    estimate = Estimate("xa", 1000, 100, min(100, d_pos * int(rho)), d_neg * int(rho))
                    rows.append(
                        linear_result(
                            sweep_id,
                            category,
                            f"pp-{min_df}",
                            C,
                            rho,
                            estimate,
                            held,
                            config_key=f"{category}-{min_df}-{C}-{rho}",
                            pp_min_df=min_df,
                            pp_stop_words="english" if min_df == 2 else None,
                        )
                    )
    return rows


def newsgroup_store(path, categories=NEWSGROUPS) -> tuple[StoreQueries, list[str]]:
    """The store at `path` and the ids of its two saved selections: by F1 (certified), then by error."""
    store = open_store(str(path), create=True, writable=True)
    store.datasets.write_results(newsgroup_rows(categories))
    store.datasets.append(
        "sweeps",
        [{"sweep_id": "r1", "run_id": "run1", "spec_toml": "[sweep]\nid = 'r1'\n", "data_fingerprint": "fp"}],
    )
    ids = []
    for extra in ([], ["--no-smooth", "--metric", "error"]):
        assert main(["select", store.uri, "--estimator", "xa", "--save", "--format", "csv", *extra]) == 0
        ids.append(next(i for i in saved_selections(store)["selection_id"].unique() if i not in ids))
        if not extra:
            certify_by_hand(store, saved_selections(store))
    return store, ids
