"""Benchmark: [estimators] span_prune on Reuters (issue 47): span's exact calls skipped, and every choice.

config/reuters.toml swept twice into fresh stores, as `xialpha sweep` runs it: with span_prune "off"
(every configuration's span estimate exact) and set to the spec's metric (a C path makes span's exact
calls only where a selection by it may need them; `xialpha.selection.contenders`). Recorded: each
sweep's wall (after an untimed small sweep, so that neither pays the process's first cluster start);
the share of configurations whose span estimate was decided by bounds
(`span_skipped_fraction`: their exact calls were never made); the median estimate_seconds /
fit_seconds of each (`xialpha_estimate_over_fit_median`, as bench/vs_linear_cv.py reports it); and for
the metric, smoothed and not, per category with RUNNERS_UP runners-up: whether the choice, its values,
every runner-up and every p-value are those of the full computation (`identical`). The selections a
pruned sweep may refuse (--global, another metric, cost 30:1) are compared where it does not, and
listed under `refused` where it does.

    python bench/span_prune.py            # Reuters ModApte (../shared/corpora/reuters21578)
    python bench/span_prune.py --quick    # config/reuters.toml's grid on a small synthetic corpus
    python bench/span_prune.py --synthetic-docs 1e5 --seed 35 --out x.json
        # issue 31's registered 10^5 quality test's corpus (make_synthetic, 8 categories, its seed)
        # and grid (9 C from 0.05 to 50, with and without stemming), swept as a user sweeps it
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
from common import QUICK_SPEC, REUTERS_SPEC, make_parser, output_path, write_results

from xialpha.errors import UserError
from xialpha.selection.contenders import PROTECTED_METRICS
from xialpha.selection.objective import Objective
from xialpha.selection.selector import RUNNERS_UP, select_stored
from xialpha.spec.sweep import parse_spec
from xialpha.storage.opening import open_store

CONFIG = ["category", "preprocessing_id", "C", "j"]
COMPARED = [*CONFIG, "value", "selection_value", "n_runners_up", "n_runners_up_tested", "significant"]
RUNNER_UP_COMPARED = [*CONFIG, "value", "selection_value", "p_micro_sign", "p_mcnemar", "p_proportion"]


QUALITY_C = [float(C) for C in np.geomspace(0.05, 50, 9)]  # bench/selection_quality.py's grid (issue 19)


def main() -> None:
    parser = make_parser(__doc__)
    parser.add_argument("--synthetic-docs", type=lambda text: int(float(text)), help="a synthetic corpus this large")
    parser.add_argument("--seed", type=int, default=35, help="the synthetic corpus's seed (with --synthetic-docs)")
    args = parser.parse_args()
    if args.synthetic_docs:
        text = _synthetic_spec(args.synthetic_docs, args.seed)
    elif args.quick:
        text = QUICK_SPEC
    else:
        text = REUTERS_SPEC.read_text(encoding="utf-8")
        text = text.replace('path = "../../shared/corpora/reuters21578"', f'path = "{Path(args.reuters).resolve()}"')
    metric = parse_spec(text).metric
    _sweep(QUICK_SPEC, "off")  # untimed: the fork server and imports a process's first sweep pays, paid before both
    full, pruned = _sweep(text, "off"), _sweep(text, metric)
    compared, refused = {}, {}
    for smooth in (True, False):
        objective = Objective(metric=metric, smooth=smooth)
        compared[f"{metric}{'' if smooth else ' (not smoothed)'}"] = _choices(pruned, objective) == _choices(
            full, objective
        )
    others = [other for other in PROTECTED_METRICS if other != metric]
    for name, objective, per_category in (
        ("global", Objective(metric=metric), False),
        *((other, Objective(metric=other), True) for other in others),
        ("cost 30:1", Objective(metric="cost", cost_fn=30.0), True),
    ):
        try:
            same = _choices(pruned, objective, per_category) == _choices(full, objective, per_category)
            compared[name] = same
        except UserError as refusal:
            refused[name] = str(refusal)
    result = {
        "benchmark": "span_prune",
        "quick": args.quick,
        "span_prune": metric,
        "corpus": f"make_synthetic(n_docs={args.synthetic_docs}, n_categories=8, seed={args.seed})"
        if args.synthetic_docs
        else "quick"
        if args.quick
        else "Reuters ModApte",
        "configurations": len(pruned["rows"]),
        "span_skipped": int(pruned["bounded"]),
        "span_skipped_fraction": pruned["bounded"] / len(pruned["rows"]),
        "wall_s": {"full": full["wall_s"], "pruned": pruned["wall_s"]},
        "xialpha_estimate_over_fit_median": {"full": full["estimate_over_fit"], "pruned": pruned["estimate_over_fit"]},
        "estimate_seconds_total": {"full": full["estimate_s"], "pruned": pruned["estimate_s"]},
        "runners_up": RUNNERS_UP,
        "identical": compared,
        "every_choice_identical": all(compared.values()),
        "refused": refused,
    }
    for key, value in result.items():
        print(f"{key}: {value}")
    write_results(result, output_path("span_prune", args))


def _synthetic_spec(n_docs: int, seed: int) -> str:
    """QUICK_SPEC on `make_synthetic(n_docs, 8 categories, seed)` (its own 70/30 split), every category,
    with the registered quality test's C grid."""
    text = QUICK_SPEC.replace("n_docs = 400", f"n_docs = {n_docs}").replace("n_categories = 3", "n_categories = 8")
    text = text.replace("seed = 3", f"seed = {seed}").replace("top_k = 2", "top_k = 8")
    return text.replace("C = [0.3, 3.0]", f"C = {QUALITY_C}").replace('id = "bench-quick"', 'id = "prune-1e5"')


def _sweep(text: str, prune: str) -> dict:
    """One sweep of the spec `text` with span_prune = `prune` into a fresh store: its store and rows,
    wall, bounded rows and the estimate seconds."""
    from xialpha.api import sweep

    text = text.replace("[estimators]\n", f'[estimators]\nspan_prune = "{prune}"\n')
    spec = parse_spec(text)
    directory = tempfile.mkdtemp(prefix="span_prune-")
    start = time.perf_counter()
    sweep(text, store=directory, quiet=True)
    wall = time.perf_counter() - start
    store = open_store(directory, create=False, writable=False)
    rows = store.read_results_df(spec.id)
    bounded = rows["span_d_pos_low"].notna().sum() if "span_d_pos_low" in rows else 0
    ratio = (rows["estimate_seconds"] / rows["fit_seconds"]).to_numpy(dtype=float)
    return {
        "store": store,
        "sweep_id": spec.id,
        "rows": rows,
        "wall_s": wall,
        "bounded": int(bounded),
        "estimate_over_fit": float(np.median(ratio)),
        "estimate_s": float(rows["estimate_seconds"].sum()),
    }


def _choices(swept: dict, objective: Objective, per_category: bool = True) -> tuple[list, list]:
    """The selection's rows and runners-up in comparable form (configurations by their columns)."""
    chosen = select_stored(
        swept["store"], swept["rows"], objective, sweep_id=swept["sweep_id"], per_category=per_category
    )
    rows = chosen.rows.sort_values("category")[COMPARED]
    runners = chosen.runners_up.sort_values(["category", "runner_up"])[RUNNER_UP_COMPARED]
    return _records(rows), _records(runners)


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: (None if pd.isna(v) else v) for k, v in row.items()} for row in frame.to_dict("records")]


if __name__ == "__main__":
    main()
