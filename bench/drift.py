"""Benchmark: xi-alpha window selection on simulated concept drift (Klinkenberg & Joachims 2000).

Reuters-21578 (all ModApte stories, by DATE) is split into 20 batches of equal size. A user's
interest is one category before a shift and another after it (the relevance swap of the drift
literature):

    A  abrupt: category X is relevant before batch 10, category Y from batch 10 on
    B  gradual: from batch 9 to 11 a growing share (1/4, 2/4, 3/4) of the documents follows Y
    C  abrupt and back: Y is relevant in batches 10-12 only, X before and after

For every newest batch t = 1..18 the drift check runs as `xialpha drift` does (each window of
the h most recent batches, xi-alpha error on batch t, smallest estimate wins, DRIFT rule), and
each window's classifier is also scored on the real labels of batch t + 1. The table shows the
window chosen over time, where DRIFT was reported, and the next-batch error of the adaptive
window against full memory and the last batch only. One simplification: the preprocessing
(vocabulary, idf) is fitted once on all batches instead of on each check's memory.

    nice python bench/drift.py            # Reuters from ../shared/corpora/reuters21578 (~10 min)
    python bench/drift.py --quick         # a synthetic stream of 10 batches (< 1 min)

Prints a table and writes bench/results/drift.json (drift_quick.json with --quick).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import platform
import time
from pathlib import Path

import numpy as np

from xialpha.concept_drift.windows import WindowJob, decide, fit_window
from xialpha.corpora import Corpus, load_reuters, make_synthetic
from xialpha.jobs.drift_check import stream_data
from xialpha.spec.drift import parse_drift_spec, split_batches

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REUTERS = REPO.parent / "shared" / "corpora" / "reuters21578"
SPEC = """
[drift]
margin = 2.0
alpha = 0.05
[batches]
by = "split"
[corpus]
loader = "synthetic"
[[preprocessing]]
min_df = 3
[svm]
C = [1.0]
"""


@dataclasses.dataclass(frozen=True)
class Setting:
    """A stream: the corpus, batch count, the categories swapped and the shift batch."""

    corpus: Corpus
    n_batches: int
    before: str
    after: str
    shift: int


def reuters_setting(path: Path) -> Setting:
    corpus = load_reuters(path)
    corpus = corpus.subset(np.argsort(corpus.timestamps, kind="stable"))
    return Setting(corpus, 20, "crude", "grain", 10)


def synthetic_setting() -> Setting:
    corpus = make_synthetic(n_docs=800, n_categories=4, seed=1, n_batches=10, category_skew=0.5)
    return Setting(corpus, 10, "cat00", "cat01", 5)


def relevance(setting: Setting, batch: np.ndarray, scenario: str) -> np.ndarray:
    """(n,) int8 labels: +1 where a document belongs to the category relevant in its batch."""
    k = setting.shift
    if scenario == "A":
        share_after = (batch >= k).astype(float)
    elif scenario == "B":
        share_after = np.clip((batch - k + 2) / 4.0, 0.0, 1.0)
    else:
        share_after = ((batch >= k) & (batch < k + 3)).astype(float)
    follows_after = np.random.default_rng(0).random(batch.shape[0]) < share_after
    has = {c: np.array([c in labels for labels in setting.corpus.labels]) for c in (setting.before, setting.after)}
    return np.where(np.where(follows_after, has[setting.after], has[setting.before]), 1, -1).astype(np.int8)


def run_scenario(spec, data, starts: np.ndarray, n_batches: int) -> dict:
    """Checks at t = 1 .. n_batches - 2, each window also scored on batch t + 1."""
    steps = []
    for t in range(1, n_batches - 1):
        windows = [
            fit_window(
                data, starts, WindowJob(0, 0, "relevant", spec.C[0], 1.0, t, h), spec.rho, spec.tol, evaluate_on=t + 1
            )
            for h in spec.window_sizes(t + 1)
        ]
        decision = decide(windows, spec.margin_points, spec.alpha)
        by_size = {r.job.window: r for r in windows}
        steps.append(
            {
                "t": t,
                "chosen_window": decision.chosen.job.window,
                "drift": decision.drift,
                "p_value": decision.p_value,
                "xa_error_chosen": decision.chosen.estimate.error,
                "xa_error_full": decision.full.estimate.error,
                "next_error_adaptive": decision.chosen.next_estimate.error,
                "next_error_full": decision.full.next_estimate.error,
                "next_error_last": by_size[1].next_estimate.error if by_size[1].status == "ok" else float("nan"),
            }
        )
    return {
        "steps": steps,
        **{
            f"mean_next_error_{name}": float(np.nanmean([s[f"next_error_{name}"] for s in steps]))
            for name in ("adaptive", "full", "last")
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a synthetic stream of 10 batches (< 1 min)")
    parser.add_argument("--reuters", type=Path, default=DEFAULT_REUTERS, help="Reuters-21578 directory or archive")
    parser.add_argument("--out", type=Path, help="where to write the JSON results")
    args = parser.parse_args()
    out = args.out or REPO / "bench" / "results" / ("drift_quick.json" if args.quick else "drift.json")

    start = time.perf_counter()
    setting = synthetic_setting() if args.quick else reuters_setting(args.reuters)
    batch = np.arange(len(setting.corpus)) * setting.n_batches // len(setting.corpus)
    labels = [f"b{b:02d}" for b in batch]
    corpus = dataclasses.replace(setting.corpus, labels=[{"relevant"}] * len(batch), splits=np.array(labels))
    spec = parse_drift_spec(SPEC)
    stream = split_batches(corpus, spec.batches)
    assert stream.corpus.ids.tolist() == corpus.ids.tolist()  # batches are consecutive: order kept
    data = stream_data(spec, stream, ["relevant"], 0, 0)
    prepared = time.perf_counter() - start
    print(
        f"{setting.corpus.name}: {len(corpus)} documents in {setting.n_batches} batches, relevance "
        f"{setting.before} -> {setting.after} at batch {setting.shift}; vectorised + Gram in {prepared:.1f} s"
    )

    results = {}
    for scenario in ("A", "B", "C"):
        y = relevance(setting, batch, scenario)
        scenario_data = dataclasses.replace(data, y_train={"relevant": y})
        began = time.perf_counter()
        results[scenario] = run_scenario(spec, scenario_data, stream.starts, setting.n_batches)
        results[scenario]["seconds"] = time.perf_counter() - began
        results[scenario]["positives_per_batch"] = [
            int((y[a:b] > 0).sum()) for a, b in zip(stream.starts, stream.starts[1:])
        ]
        print_scenario(scenario, results[scenario])

    report = {
        "benchmark": "drift",
        "quick": args.quick,
        "corpus": setting.corpus.name,
        "n_documents": len(corpus),
        "n_batches": setting.n_batches,
        "before": setting.before,
        "after": setting.after,
        "shift_batch": setting.shift,
        "margin_points": spec.margin_points,
        "alpha": spec.alpha,
        "C": spec.C[0],
        "rho": spec.rho,
        "prepare_seconds": prepared,
        "total_seconds": time.perf_counter() - start,
        "machine": {"python": platform.python_version(), "processor": platform.processor() or platform.machine()},
        "scenarios": results,
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {out.relative_to(REPO) if out.is_relative_to(REPO) else out} in {report['total_seconds']:.0f} s")


def print_scenario(name: str, result: dict) -> None:
    print(f"\nscenario {name}: t = newest batch; next-batch errors in %")
    print(
        f"{'t':>3} {'window':>6} {'drift':>5} {'p':>8} {'xa_chosen':>9} {'xa_full':>7} "
        f"{'next_adaptive':>13} {'next_full':>9} {'next_last':>9}"
    )
    for s in result["steps"]:
        print(
            f"{s['t']:>3} {s['chosen_window']:>6} {'DRIFT' if s['drift'] else '':>5} {s['p_value']:>8.2g} "
            f"{100 * s['xa_error_chosen']:>9.1f} {100 * s['xa_error_full']:>7.1f} "
            f"{100 * s['next_error_adaptive']:>13.1f} {100 * s['next_error_full']:>9.1f} "
            f"{100 * s['next_error_last']:>9.1f}"
        )
    print(
        f"mean next-batch error: adaptive {100 * result['mean_next_error_adaptive']:.2f}%, "
        f"full memory {100 * result['mean_next_error_full']:.2f}%, last batch "
        f"{100 * result['mean_next_error_last']:.2f}% "
        f"({result['seconds']:.1f} s)"
    )


if __name__ == "__main__":
    main()
