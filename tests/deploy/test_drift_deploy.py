"""deploy/ for scheduled drift checks: the CronJob, crontab line and systemd units run a `xialpha drift`
command line the real parser accepts, on a spec that parses, and map the exit codes as documented."""

from __future__ import annotations

import configparser
import shlex
from pathlib import Path

import pytest

from xialpha.cli import build_parser
from xialpha.concept_drift.outcome import EXIT_DRIFT, EXIT_FAILED, EXIT_NO_DRIFT
from xialpha.spec.drift import parse_drift_spec

yaml = pytest.importorskip("yaml")

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
CRON = DEPLOY / "cron"


def parse_drift_command(argv: list[str]):
    assert Path(argv[0]).name == "xialpha" and argv[1] == "drift", argv
    return build_parser().parse_args(argv[1:])


def kubernetes_documents() -> dict[str, dict]:
    text = (DEPLOY / "kubernetes" / "drift-cronjob.yaml").read_text(encoding="utf-8")
    return {doc["kind"]: doc for doc in yaml.safe_load_all(text)}


def test_cronjob_runs_the_configmap_spec_on_the_store_volume():
    docs = kubernetes_documents()
    job = docs["CronJob"]["spec"]["jobTemplate"]["spec"]
    pod = job["template"]["spec"]
    (container,) = pod["containers"]
    args = parse_drift_command(["xialpha", *container["args"]])
    assert args.store == "/store" and args.spec == "/etc/xialpha/drift.toml"
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    mounts = {mount["mountPath"]: mount["name"] for mount in container["volumeMounts"]}
    assert volumes[mounts["/etc/xialpha"]]["configMap"]["name"] == docs["ConfigMap"]["metadata"]["name"]
    pvc = yaml.safe_load((DEPLOY / "kubernetes" / "store-pvc.yaml").read_text(encoding="utf-8"))
    assert volumes[mounts["/store"]]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
    spec = parse_drift_spec(docs["ConfigMap"]["data"]["drift.toml"], source="drift.toml")
    fetched = pod["initContainers"][0]["args"]
    assert spec.corpus.args["path"] == fetched[fetched.index("--dest") + 1]
    assert docs["CronJob"]["spec"]["concurrencyPolicy"] == "Forbid" and pod["restartPolicy"] == "Never"


def test_cronjob_fails_at_once_on_drift_and_bad_input_and_retries_failed_checks():
    job = kubernetes_documents()["CronJob"]["spec"]["jobTemplate"]["spec"]
    (rule,) = job["podFailurePolicy"]["rules"]
    assert rule["action"] == "FailJob" and rule["onExitCodes"]["operator"] == "In"
    assert rule["onExitCodes"]["containerName"] == job["template"]["spec"]["containers"][0]["name"]
    assert sorted(rule["onExitCodes"]["values"]) == [2, EXIT_DRIFT]
    assert EXIT_FAILED not in rule["onExitCodes"]["values"] and job["backoffLimit"] >= 1


def test_crontab_line_runs_a_valid_drift_command_and_prints_only_on_failure():
    lines = [line for line in (CRON / "crontab").read_text().splitlines() if line and not line.startswith("#")]
    (entry,) = [line for line in lines if "=" not in line.split()[0]]
    fields = entry.split(None, 5)
    assert len(fields[:5]) == 5 and fields[4] == "1"
    command, _, fallback = fields[5].partition("||")
    parse_drift_command(shlex.split(command.split(">")[0]))
    assert fallback.strip().startswith("cat ")


def test_systemd_units_run_a_valid_drift_command_weekly():
    service = configparser.ConfigParser(interpolation=None, strict=False)
    service.read(CRON / "xialpha-drift.service")
    assert service["Service"]["Type"] == "oneshot"
    assert "SuccessExitStatus" not in service["Service"]  # exit 3 must mark the unit failed
    parse_drift_command(shlex.split(service["Service"]["ExecStart"]))
    timer = configparser.ConfigParser(interpolation=None)
    timer.read(CRON / "xialpha-drift.timer")
    assert timer["Timer"]["OnCalendar"].startswith("Mon") and timer["Install"]["WantedBy"] == "timers.target"


def test_readme_and_help_document_every_exit_code_and_file():
    readme = (CRON / "README.md").read_text(encoding="utf-8")
    for path in CRON.iterdir():
        if path.name != "README.md":
            assert f"`{path.name}`" in readme, path.name
    help_text = build_parser()._subparsers._group_actions[0].choices["drift"].format_help()
    for code in (EXIT_NO_DRIFT, EXIT_FAILED, 2, EXIT_DRIFT):
        assert f"| {code} |" in readme and f"  {code}  " in help_text
