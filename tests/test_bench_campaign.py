"""The fault campaign's quick run (`bench/campaign.py --quick`): in a file of its own, so that
pytest-xdist's `--dist loadfile` runs it beside the other benchmarks' quick runs."""

from __future__ import annotations

import pytest
from bench_runs import run_quick

pytestmark = pytest.mark.slow  # a campaign of CLI processes and sweeps: CI runs it, `-m slow`

CAMPAIGN_KEYS = [
    "cases",
    "tracebacks",
    "crashes",
    "hangs",
    "stores_changed_by_failures",
    "rows_lost",
    "secrets",
    "findings",
    "by_family",
    "machine",
]


def test_the_quick_campaign_breaks_no_invariant(tmp_path):
    result = run_quick("campaign", tmp_path / "campaign.json")
    missing = [key for key in CAMPAIGN_KEYS if key not in result]
    assert not missing, f"campaign: JSON lacks {missing}"
    assert result["quick"] is True and result["machine"]["nproc"] >= 1
    assert result["cases"] >= 20 and set(result["by_family"]) == {
        "secret_carriers",
        "hostile_labels",
        "api_types",
        "certify_kills",
        "artefact_mutations",
        "output_targets",
        "signals_at_start",
        "stalled_store",
        "limits",
        "compaction_races",
        "summary_tampering",
        "special_files",
        "predict_line_breaks",
        "auto_cut_signals",
        "spec_tampering",
        "stalled_corpus",
        "hostile_search",
    }
    assert result["broken_cases"] == 0, result["broken"]
