"""CI smoke of every bench script: `python bench/<name>.py --quick --out <tmp>.json` runs and writes
the keys the issue promises; the full runs' figures in bench/results are never touched."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from bench_runs import BENCH, REPO, run_quick

pytestmark = pytest.mark.slow  # each runs a benchmark script (sweeps, peers, campaigns): CI runs them, `-m slow`


# script -> keys its JSON must have at the top level
SCRIPTS = {
    "reproduce_table1": ["table", "xa_beyond_holdout_counts", "paper_agreement_rho1", "machine"],
    "vs_cross_validation": [
        "xialpha_wall_s",
        "gscv_sparse_wall_s",
        "gscv_sparse_extrapolated",
        "gscv_gram_wall_s",
        "speedup_vs_sparse",
        "speedup_vs_gram",
        "regret_xialpha",
        "regret_cv",
        "machine",
    ],
    "overhead": [
        "estimate_over_fit_median",
        "span_over_fit_median",
        "xa_only_over_fit_median",
        "default_estimate_over_fit_median",
        "large",
        "fits",
        "machine",
    ],
    "scaling": ["speedup_2_vs_1", "wall_over_floor", "overhead", "runs", "machine"],
    "vs_linear_cv": [
        "speedup",
        "speedup_cv5",
        "regret_xialpha",
        "regret_cv",
        "regret_cv5",
        "xialpha_wall_s",
        "peer_wall_s",
        "peer_cv5_wall_s",
        "xialpha_seconds",
        "fixed_seconds",
        "fixed_parts",
        "small",
        "machine",
    ],
    "scale": [
        "runs",
        "loglog_slope",
        "gscv_wall_s_1e5",
        "speedup_1e5",
        "speedup_cv5_1e5",
        "speedup_2_vs_1_workers_1e5",
        "machine",
    ],
    "loo": [
        "retrain_fraction",
        "pruned_equals_bruteforce",
        "retrain_fraction_xi_alpha",
        "xi_alpha_pruned_equals_bruteforce",
        "xa2_flags_every_loo_error",
        "configs",
        "machine",
    ],
}
# other developers' bench scripts that take --quick and --out: run, check they write JSON
OTHERS = [
    "preprocess",
    "selection_quality",
    "drift",
    "store",
    "fixed_overhead",
    "c_ladder",
    "c_auto",
    "span_prune",
    "data_path",
]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    """quick(name) -> the JSON of `bench/<name>.py --quick`, each script run once (this file's
    tests run on one pytest-xdist worker: `--dist loadfile`)."""
    directory, cache = tmp_path_factory.mktemp("bench"), {}

    def result(name: str) -> dict:
        if name not in cache:
            cache[name] = run_quick(name, directory / f"{name}.json")
        return cache[name]

    return result


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_quick_run_writes_promised_keys(name, quick):
    result = quick(name)
    missing = [key for key in SCRIPTS[name] if key not in result]
    assert not missing, f"{name}: JSON lacks {missing}"
    assert result["quick"] is True
    assert result["machine"]["nproc"] >= 1


@pytest.mark.parametrize("name", [n for n in OTHERS if (BENCH / f"{n}.py").is_file()])
def test_other_bench_scripts_quick_run(name, quick):
    result = quick(name)
    assert result["benchmark"] == name and result["quick"] is True


def test_table1_rows_per_category_and_rho(quick):
    result = quick("reproduce_table1")
    assert set(result["table"]) and all(set(rows) == {"1", "2"} for rows in result["table"].values())
    for rows in result["table"].values():
        for row in rows.values():
            assert {"err_xa", "err_true", "f1_xa", "f1_true", "paper_err_xa"} <= set(row)
            assert 0 <= row["err_xa"] <= 100 and 0 <= row["err_true"] <= 100
        # rho = 2 flags at least the examples rho = 1 flags: its error estimate is never lower
        assert rows["2"]["err_xa"] >= rows["1"]["err_xa"]
        assert rows["1"]["err_true"] == rows["2"]["err_true"]
    count = result["xa_beyond_holdout_counts"]["1"]
    assert count["of"] == result["n_splits"] * len(result["table"])


def test_loo_pruned_agrees_with_brute_force(quick):
    result = quick("loo")
    assert result["pruned_equals_bruteforce"] is True
    assert 0 < result["retrain_fraction"] < 1
    assert result["retrain_fraction_xi_alpha"] <= result["retrain_fraction"]
    for row in result["configs"]:
        assert row["pruned_error"] == row["loo_error"]
        assert row["xa2_error"] >= row["loo_error"] or not row["stable"]


def test_vs_cross_validation_regret_and_speedups_consistent(quick):
    result = quick("vs_cross_validation")
    assert result["xialpha_estimator"] == "span"
    for name in ("regret_xialpha", "regret_xialpha_xa", "regret_cv"):
        per_category = result[name]["per_category"]
        assert set(per_category) == set(result["grid"]["categories"])
        assert all(value >= 0 for value in per_category.values())
        assert math.isclose(result[name]["macro"], sum(per_category.values()) / len(per_category))
    assert math.isclose(result["speedup_vs_gram"], result["gscv_gram_wall_s"] / result["xialpha_wall_s"])
    assert math.isclose(result["speedup_vs_sparse"], result["gscv_sparse_wall_s"] / result["xialpha_wall_s"])


def test_quick_runs_default_to_git_ignored_files():
    ignored = subprocess.run(["git", "check-ignore", "-q", "bench/results/scaling.quick.json"], cwd=REPO)
    assert ignored.returncode == 0, "bench/results/*.quick.json must be git-ignored"


def test_selection_quality_pools_runs_with_distinct_seeds(quick, tmp_path):
    first = quick("selection_quality")
    script = str(BENCH / "selection_quality.py")
    second_path, first_path, pooled_path = tmp_path / "seed1.json", tmp_path / "seed0.json", tmp_path / "pooled.json"
    first_path.write_text(json.dumps(first))
    run = subprocess.run(
        [
            sys.executable,
            script,
            "--quick",
            "--first-seed",
            "16",
            "--no-loo",
            "--no-shortlist",
            "--out",
            str(second_path),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    pool = subprocess.run(
        [sys.executable, script, "--pool", str(first_path), str(second_path), "--out", str(pooled_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert pool.returncode == 0, pool.stderr[-3000:]
    pooled = json.loads(pooled_path.read_text())
    assert sorted({row["split"] for row in pooled["rows"]}) == [15, 16]
    # the second run had no exact LOO: LOO selectors are summarised over the one split that has them
    assert pooled["splits"]["loo"] == 1 and pooled["splits"]["short_span3"] == 1 and pooled["splits"]["span"] == 2
    assert pooled["default_selector"] == "span" and pooled["regret_half_test"]["fresh_half"] >= 0
    paired = pooled["vs_cv10"]["span"]
    assert paired["splits"] == 2 and paired["ci95"][0] <= paired["mean"] <= paired["ci95"][1]
    assert paired["wins"] + paired["ties"] + paired["losses"] == len(first["settings"]["synthetic"]["categories"]) * 2
    assert pooled["vs_cv10"]["loo"]["splits"] == 1
    twice = subprocess.run(
        [sys.executable, script, "--pool", str(first_path), str(first_path), "--out", str(pooled_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert twice.returncode != 0 and "share (setting, split) pairs" in twice.stderr


def test_vs_linear_cv_regrets_speedups_and_small_subset(quick):
    result = quick("vs_linear_cv")
    assert result["xialpha_estimator"] == "span"
    for part in (result, result["small"]):
        missing = [key for key in SCRIPTS["vs_linear_cv"] if key not in part and key not in ("small", "machine")]
        assert not missing, f"lacks {missing}"
        assert math.isclose(part["speedup"], part["peer_wall_s"] / part["xialpha_wall_s"])
        per_category = part["regret_per_category"]
        assert set(per_category) == set(part["categories"])
        for method in ("xialpha", "cv"):
            assert all(row[method] >= 0 for row in per_category.values())
            assert math.isclose(
                part[f"regret_{method}"], sum(row[method] for row in per_category.values()) / len(per_category)
            )
        assert part["xialpha_fits"] == len(part["categories"]) * len(part["preprocessings"]) * len(part["C"])
        if "liblinear_c_search_wall_s" in part:  # liblinear-official installed
            assert math.isclose(
                part["liblinear_over_xialpha_core_s"], part["liblinear_end_to_end_s"] / (2 * part["xialpha_wall_s"])
            )
            assert set(part["liblinear_chosen"]) == {
                f"{c}/{p}" for c in part["categories"] for p in part["preprocessings"]
            }
        else:
            assert result["liblinear_note"].startswith("skipped")
    small = result["small"]
    assert small["subset"]["n_docs"] == small["n_train"] + small["n_test"] < result["n_train"] + result["n_test"]


def test_scale_runs_measure_every_process(quick):
    result = quick("scale")
    runs = result["runs"]
    assert sorted({run["n_docs"] for run in runs}) == result["sizes"]
    assert sorted(run["workers"] for run in runs if run["n_docs"] == result["compare_n_docs"]) == [1, 2]
    for run in runs:
        assert "error" not in run, run.get("error")
        assert run["failed"] == 0 and run["fits"] == 4 * 8
        # the driver (with the nannies) and every worker process were sampled: the tree's peak exceeds the driver's
        assert run["processes"] >= 1 + run["workers"]
        assert run["peak_rss_gb"] > run["peak_rss_driver_gb"] > 0
        assert (
            run["cpu_s"] > 0
            and run["wall_s"] >= run["stages"]["last_task_end_s"] > run["stages"]["first_task_start_s"] > 0
        )
        assert {"read", "count", "block", "fit"} <= set(run["stages"]["by_task"])
    two = [run for run in runs if run["n_docs"] == result["compare_n_docs"] and run["workers"] == 2][0]
    one = [run for run in runs if run["n_docs"] == result["compare_n_docs"] and run["workers"] == 1][0]
    assert math.isclose(result["speedup_2_vs_1_workers_1e5"], one["wall_s"] / two["wall_s"])
    assert math.isclose(result["speedup_1e5"], result["gscv_wall_s_1e5"] / two["wall_s"])
    assert result["gscv"]["processes"] >= 2  # the driver and joblib's workers


def test_vs_linear_cv_compares_both_peers_and_splits_xialphas_seconds(quick):
    result = quick("vs_linear_cv")
    for part in (result, result["small"]):
        assert math.isclose(part["speedup_cv5"], part["peer_cv5_wall_s"] / part["xialpha_wall_s"])
        assert set(part["chosen"]) == {"xialpha", "cv", "cv5"}
        spent = part["xialpha_seconds"]
        assert math.isclose(
            spent["fits_s"] + spent["estimates_s"] + spent["data_path_and_bookkeeping_task_s"], spent["task_s"]
        )
        assert spent["fits_s"] > 0 and spent["estimates_s"] > 0
        assert math.isclose(spent["fixed_s"], spent["wall_s"] - spent["fit_task_s"] / spent["threads"])
        assert math.isclose(sum(spent["fixed_parts_s"].values()), spent["fixed_s"])
        assert part["fixed_seconds"] in (spent["fixed_s"], part["xialpha_seconds_second_run"]["fixed_s"])


def test_overhead_measures_the_default_estimates_at_both_sizes(quick):
    result = quick("overhead")
    for part in (result, result["large"]):
        assert part["default_estimate_over_fit_median"] > 0
        assert part["default_estimate_over_fit_total"] > 0
    assert result["large"]["n_train"] > result["n_train"]  # --quick: 3,000 synthetic documents vs 600
