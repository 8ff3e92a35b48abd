"""[cluster] for SLURM and Kubernetes: checked when the spec is parsed, turned into real job
scripts (dask-jobqueue) and DaskCluster resources."""

from __future__ import annotations

import contextlib
import socket
import warnings
from pathlib import Path

import pytest

from xialpha.errors import UserError
from xialpha.jobs.cluster import connect, kubernetes_cluster_spec, slurm_cluster_kwargs
from xialpha.spec.sweep import load_spec, parse_spec

REPO = Path(__file__).resolve().parents[2]
CORPUS = '[corpus]\nloader = "synthetic"\nn_docs = 50\n'
SLURM = CORPUS + '[cluster]\nkind = "slurm"\nmemory_limit = "4GiB"\n'
KUBERNETES = CORPUS + '[cluster]\nkind = "kubernetes"\nimage = "registry.example.com/xialpha:1"\n'


def _cluster(text: str):
    return parse_spec(text, source="s.toml").cluster


def test_slurm_job_script_carries_config_slurm_toml(tmp_path, monkeypatch):
    dask_jobqueue = pytest.importorskip("dask_jobqueue")
    monkeypatch.chdir(tmp_path)  # dask-jobqueue creates log_directory
    spec = load_spec(REPO / "config" / "slurm.toml")
    with dask_jobqueue.SLURMCluster(**slurm_cluster_kwargs(spec.cluster)) as cluster:
        script = cluster.job_script()
    lines = script.splitlines()
    for line in ("#SBATCH -t 04:00:00", "#SBATCH --mem=4G", "#SBATCH --cpus-per-task=1", "export OMP_NUM_THREADS=1"):
        assert line in lines, line
    # No account or partition: the site's defaults until [cluster] account/queue set them.
    assert not [line for line in lines if line.startswith(("#SBATCH -A", "#SBATCH -p"))]
    assert "--nthreads 1" in script and "--memory-limit 4.00GiB" in script
    assert "--local-directory ${TMPDIR:-/tmp}" in script  # the job's shell expands it, also where TMPDIR is unset


def test_slurm_processes_multiply_cores_and_memory_per_job():
    kwargs = slurm_cluster_kwargs(_cluster(SLURM + 'threads_per_worker = 3\nprocesses = 2\naccount = "a"\n'))
    assert kwargs == {
        "cores": 6,
        "processes": 2,
        "memory": 2 * 4 * 2**30,
        "account": "a",
        "scheduler_options": {"dashboard_address": ":0"},
    }


def test_a_slurm_schedulers_dashboard_takes_a_free_port_when_8787_is_taken(tmp_path, monkeypatch):
    """As on a login node shared with other Dask users: no five-line warning on the driver's stderr."""
    dask_jobqueue = pytest.importorskip("dask_jobqueue")
    monkeypatch.chdir(tmp_path)
    with socket.socket() as taken, warnings.catch_warnings():
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        with contextlib.suppress(OSError):  # already taken by someone else: as good
            taken.bind(("", 8787))
            taken.listen()
        warnings.simplefilter("error")
        with dask_jobqueue.SLURMCluster(**slurm_cluster_kwargs(_cluster(SLURM))) as cluster:
            link = cluster.dashboard_link
    assert link and ":8787/" not in link


@pytest.mark.parametrize(
    "text, message",
    [
        (SLURM + "cores = 4", 'cluster.cores: unknown key for kind "slurm"; use threads_per_worker'),
        (SLURM + 'memory = "4GiB"', 'cluster.memory: unknown key for kind "slurm"; use memory_limit'),
        (SLURM + 'partition = "x"', 'cluster.partition: unknown key for kind "slurm"'),
        (SLURM + 'walltime = "2h"', "cluster.walltime: must be a SLURM time [D-]HH:MM:SS, got '2h'"),
        (SLURM + "walltime = 3600", "cluster.walltime: must be a SLURM time"),
        (SLURM + "processes = 0", "cluster.processes: must be an integer >= 1, got 0"),
        (SLURM + 'account = ""', "cluster.account: must be a non-empty string"),
        (SLURM + 'job_extra_directives = "--exclusive"', "cluster.job_extra_directives: must be a list of strings"),
        (CORPUS + '[cluster]\nkind = "slurm"\n', 'cluster.memory_limit: is required for kind "slurm"'),
        (CORPUS + '[cluster]\nmemory_limit = "lots"\n', "cluster.memory_limit: must be a size like 8GiB"),
        (CORPUS + '[cluster]\nmemory_limit = "-1GB"\n', "cluster.memory_limit: must be a size"),
        (CORPUS + '[cluster]\nkind = "kubernetes"\n', 'cluster.image: is required for kind "kubernetes"'),
        (KUBERNETES + 'name = "Xialpha_1"', "cluster.name: must be a Kubernetes name"),
        (KUBERNETES + 'image_pull_policy = "always"', "cluster.image_pull_policy: must be one of Always"),
        (KUBERNETES + "env = { A = 1 }", "cluster.env: must be a table of string values"),
        (KUBERNETES + '[cluster.resources]\ncpu = "2"', "cluster.resources: must be a table with requests"),
        (KUBERNETES + 'walltime = "01:00:00"', 'cluster.walltime: unknown key for kind "kubernetes"'),
        (CORPUS + '[cluster]\naddress = "tcp://host:port"\n', "cluster.address: not a scheduler address"),
        (CORPUS + '[cluster]\naddress = "http://host:8786"\n', "cluster.address: not a scheduler address"),
        (
            CORPUS + '[cluster]\naddress = "tls://host:8786"\n',
            "cluster.address: a tls:// address needs [cluster.security]",
        ),
    ],
)
def test_cluster_mistakes_fail_when_the_spec_is_parsed(text, message):
    with pytest.raises(UserError) as info:
        parse_spec(text, source="s.toml")
    assert str(info.value).startswith("s.toml: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_kubernetes_containers_override_the_entrypoint_and_carry_worker_limits():
    spec = _cluster(
        KUBERNETES + 'workers = 3\nthreads_per_worker = 4\nmemory_limit = "2GiB"\nname = "sweep-1"\n'
        'env = { OMP_NUM_THREADS = "1" }\n[cluster.resources.limits]\nmemory = "3Gi"\n'
    )
    resource = kubernetes_cluster_spec(spec)
    assert resource["metadata"]["name"] == "sweep-1"
    worker_group = resource["spec"]["worker"]
    worker = worker_group["spec"]["containers"][0]
    scheduler = resource["spec"]["scheduler"]["spec"]["containers"][0]
    assert worker_group["replicas"] == 3
    assert kubernetes_cluster_spec(spec, n_workers=7)["spec"]["worker"]["replicas"] == 7
    assert "args" not in worker and "args" not in scheduler  # args would follow the xialpha ENTRYPOINT
    assert worker["command"][:2] == ["dask", "worker"] and scheduler["command"][:2] == ["dask", "scheduler"]
    command = worker["command"]
    assert command[command.index("--nthreads") + 1] == "4" and command[command.index("--memory-limit") + 1] == "2GiB"
    assert worker["resources"] == {"limits": {"memory": "3Gi"}} and "resources" not in scheduler
    assert worker["env"] == scheduler["env"] == [{"name": "OMP_NUM_THREADS", "value": "1"}]
    assert resource["spec"]["scheduler"]["service"]["selector"]["dask.org/cluster-name"] == "sweep-1"
    assert worker["image"] == scheduler["image"] == "registry.example.com/xialpha:1"


def test_scheduler_override_must_be_a_valid_address():
    with pytest.raises(UserError, match=r"^--scheduler: not a scheduler address"):
        with connect(_cluster(CORPUS), address="localhost:port"):
            pass


def test_unreachable_scheduler_is_a_one_line_user_error(monkeypatch):
    import time

    import dask

    import xialpha.jobs.cluster

    started = time.monotonic()
    with pytest.raises(
        UserError, match=r"^--scheduler: no Dask scheduler listens at tcp://127.0.0.1:9 \(connection refused\)"
    ):
        with connect(_cluster(CORPUS), address="tcp://127.0.0.1:9"):
            pass
    assert time.monotonic() - started < 10  # said at once, not after Dask's 30 s connect timeout
    # what is not refused outright (no answer yet) is left to Dask's retries, until its timeout
    monkeypatch.setattr(xialpha.jobs.cluster, "_refuse_if_nothing_listens", lambda name, address: None)
    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        with pytest.raises(
            UserError, match=r"^--scheduler: cannot reach a Dask scheduler at tcp://127.0.0.1:9 within 1s"
        ):
            with connect(_cluster(CORPUS), address="tcp://127.0.0.1:9"):
                pass


@pytest.mark.cluster
def test_the_dashboard_a_sweep_links_to_is_served():
    """The link a sweep prints leads to Dask's status page, not to "Dask needs bokeh"."""
    import urllib.request

    from xialpha.spec.cluster import ClusterSpec

    with connect(ClusterSpec(kind="local", workers=1)) as client:
        with urllib.request.urlopen(client.dashboard_link, timeout=30) as page:
            body = page.read().decode("utf-8", "replace")
    assert page.status == 200 and "bokeh" in body.lower() and "needs bokeh" not in body.lower()
