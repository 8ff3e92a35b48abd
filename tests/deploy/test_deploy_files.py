"""deploy/: every YAML parses, containers run what the image can run, the Dockerfile is sound.

No Docker engine or Kubernetes API here, so the files are checked by parsing: YAML documents,
Dockerfile instructions, the `dask`/`xialpha` command lines (with the real CLI parsers), the
sweep spec inside the ConfigMap, and the DaskCluster manifest against `kubernetes_cluster_spec`.
"""

from __future__ import annotations

import copy
import itertools
import json
import re
import subprocess
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")

from xialpha.cli import COMMANDS, build_parser  # noqa: E402
from xialpha.jobs.cluster import IMAGE_UID, kubernetes_cluster_spec  # noqa: E402
from xialpha.spec.sweep import load_spec, parse_spec  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
IMAGE = "xialpha"
KUBERNETES_KINDS = {
    ("v1", "Namespace"),
    ("v1", "PersistentVolumeClaim"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("batch/v1", "CronJob"),
    ("batch/v1", "Job"),
    ("kubernetes.dask.org/v1", "DaskCluster"),
    ("kubernetes.dask.org/v1", "DaskJob"),
    ("kustomize.config.k8s.io/v1beta1", "Kustomization"),
}


def _yaml_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yml", ".yaml"))


def _documents(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


def _kustomize_configurations() -> set[Path]:
    kustomization = DEPLOY / "kubernetes" / "kustomization.yaml"
    return {kustomization.parent / name for name in _documents(kustomization)[0].get("configurations", [])}


def _manifest(name: str, kind: str) -> dict:
    docs = [doc for doc in _documents(DEPLOY / "kubernetes" / name) if doc["kind"] == kind]
    assert len(docs) == 1, f"{name}: expected one {kind}"
    return docs[0]


def _containers(node, where: str = ""):
    """(where, container) for every Kubernetes container (a dict with name+image) under node."""
    if isinstance(node, dict):
        if "image" in node and "name" in node and isinstance(node["image"], str):
            yield where, node
        for key, value in node.items():
            yield from _containers(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _containers(value, f"{where}[{i}]")


def _check_argv(argv: list[str], where: str) -> None:
    """argv as the image runs it: `dask scheduler|worker ...` or `xialpha <command> ...`."""
    from distributed.cli import dask_scheduler, dask_worker

    program, *rest = argv
    if program == "dask":
        sub, *options = rest
        main = {"scheduler": dask_scheduler.main, "worker": dask_worker.main}[sub]
        main.make_context(f"dask {sub}", list(options))  # raises on an unknown option or bad value
    else:
        assert program == "xialpha", f"{where}: runs {program!r}, which the image does not provide"
        assert rest and rest[0] in COMMANDS, f"{where}: {rest[:1]} is not an xialpha command ({', '.join(COMMANDS)})"
        build_parser().parse_args(rest)


def _entrypoint() -> list[str]:
    return json.loads(dict(_final_stage())["ENTRYPOINT"])


def _dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) of deploy/Dockerfile, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", (DEPLOY / "Dockerfile").read_text(encoding="utf-8"))
    instructions = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            word, _, rest = line.partition(" ")
            instructions.append((word.upper(), " ".join(rest.split())))
    return instructions


def _final_stage() -> list[tuple[str, str]]:
    instructions = _dockerfile()
    last_from = max(i for i, (word, _) in enumerate(instructions) if word == "FROM")
    return instructions[last_from:]


# --- YAML -------------------------------------------------------------------------------------


def test_there_are_compose_and_kubernetes_files():
    names = {p.relative_to(DEPLOY).as_posix() for p in _yaml_files()}
    assert {"docker-compose.yml", "kubernetes/daskcluster.yaml", "kubernetes/sweep-daskjob.yaml"} <= names


@pytest.mark.parametrize("path", _yaml_files(), ids=lambda p: p.relative_to(DEPLOY).as_posix())
def test_every_yaml_parses_and_kubernetes_kinds_are_known(path):
    docs = _documents(path)
    assert docs and all(isinstance(doc, dict) for doc in docs), f"{path}: empty or not a mapping"
    if path.parent.name != "kubernetes" or path in _kustomize_configurations():
        return
    for doc in docs:
        assert (doc.get("apiVersion"), doc.get("kind")) in KUBERNETES_KINDS, (
            f"{path}: {doc.get('apiVersion')}/{doc.get('kind')}"
        )
        assert doc["kind"] == "Kustomization" or doc["metadata"].get("name"), f"{path}: {doc['kind']} without a name"


@pytest.mark.parametrize("path", [p for p in _yaml_files() if p.parent.name == "kubernetes"], ids=lambda p: p.name)
def test_kubernetes_containers_run_what_the_image_provides(path):
    """`command` replaces the ENTRYPOINT (then it must be dask or xialpha); `args` follow it."""
    entrypoint = _entrypoint()
    for doc in _documents(path):
        for where, container in _containers(doc):
            if container["image"].split(":")[0].split("/")[-1] != IMAGE:
                continue
            argv = container.get("command") or entrypoint + container.get("args", [])
            _check_argv(argv, f"{path.name}{where}")


def test_kubernetes_pods_run_as_the_image_user():
    for name in ("daskcluster.yaml", "sweep-daskjob.yaml"):
        text = (DEPLOY / "kubernetes" / name).read_text(encoding="utf-8")
        assert text.count("runAsNonRoot: true") == text.count(f"runAsUser: {IMAGE_UID}") >= 2, name


def test_daskcluster_manifest_is_what_kind_kubernetes_creates():
    manifest = _manifest("daskcluster.yaml", "DaskCluster")
    assert manifest["metadata"].pop("namespace") == "xialpha"
    assert manifest == kubernetes_cluster_spec(load_spec(REPO / "config" / "kubernetes.toml").cluster)


def test_daskjob_runs_the_configmap_spec_on_its_own_scheduler():
    job = _manifest("sweep-daskjob.yaml", "DaskJob")
    pod = job["spec"]["job"]["spec"]
    assert pod["restartPolicy"] == "Never"
    runner = pod["containers"][0]
    assert runner["args"][:2] == ["sweep", "/etc/xialpha/sweep.toml"]
    assert runner["args"][runner["args"].index("--scheduler") + 1] == "$(DASK_SCHEDULER_ADDRESS)"
    volumes = {v["name"]: v for v in pod["volumes"]}
    for container in pod["containers"] + pod.get("initContainers", []):
        assert {m["name"] for m in container["volumeMounts"]} <= set(volumes), container["name"]
    configmap = _manifest("sweep-spec-configmap.yaml", "ConfigMap")
    pvc = _manifest("store-pvc.yaml", "PersistentVolumeClaim")
    assert volumes["spec"]["configMap"]["name"] == configmap["metadata"]["name"]
    assert volumes["store"]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"]
    spec = parse_spec(configmap["data"]["sweep.toml"], source="sweep.toml")
    fetched = pod["initContainers"][0]["args"]
    assert spec.corpus.args["path"] == fetched[fetched.index("--dest") + 1]
    # The workers read the corpus: each worker pod fetches its own copy to the spec's path.
    worker_pod = copy.deepcopy(job["spec"]["cluster"]["spec"]["worker"]["spec"])
    worker_volumes = {v["name"]: v for v in worker_pod.pop("volumes")}
    worker_fetch = worker_pod.pop("initContainers")[0]
    assert worker_fetch["args"] == fetched and worker_volumes["data"] == volumes["data"]
    mounts = {m["mountPath"]: m["name"] for m in worker_pod["containers"][0].pop("volumeMounts")}
    assert spec.corpus.args["path"].startswith(next(iter(mounts)) + "/") and set(mounts.values()) == {"data"}
    # Otherwise the job's cluster is the standalone DaskCluster, named after the job.
    cluster = kubernetes_cluster_spec(load_spec(REPO / "config" / "kubernetes.toml").cluster)["spec"]
    cluster["scheduler"]["service"]["selector"]["dask.org/cluster-name"] = job["metadata"]["name"]
    assert {
        **job["spec"]["cluster"]["spec"],
        "worker": {**job["spec"]["cluster"]["spec"]["worker"], "spec": worker_pod},
    } == cluster


def test_kustomization_lists_existing_files_and_every_namespaced_object_shares_the_namespace():
    kustomization = _documents(DEPLOY / "kubernetes" / "kustomization.yaml")[0]
    for name in kustomization["resources"] + kustomization["configurations"]:
        assert (DEPLOY / "kubernetes" / name).is_file(), name
    namespace = _manifest("namespace.yaml", "Namespace")["metadata"]["name"]
    for name in kustomization["resources"]:
        for doc in _documents(DEPLOY / "kubernetes" / name):
            assert doc["kind"] == "Namespace" or doc["metadata"]["namespace"] == namespace, name


# --- docker compose ---------------------------------------------------------------------------


def test_compose_services_run_what_the_image_provides():
    compose = _documents(DEPLOY / "docker-compose.yml")[0]
    services = compose["services"]
    assert {"scheduler", "worker", "sweep"} <= set(services)
    built = [s for s in services.values() if "build" in s]
    assert len(built) == 1
    assert (DEPLOY / built[0]["build"]["context"] / built[0]["build"]["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    for name, service in services.items():
        assert service["image"].split(":")[0] == IMAGE, name
        argv = (service.get("entrypoint") or _entrypoint()) + service.get("command", [])
        _check_argv(argv, f"docker-compose.yml services.{name}")


def test_compose_sweep_is_one_shot_with_the_store_volume_and_a_spec_that_parses():
    compose = _documents(DEPLOY / "docker-compose.yml")[0]
    sweep = compose["services"]["sweep"]
    assert sweep["restart"] == "no"
    mounts = dict(volume.split(":")[:2][::-1] for volume in sweep["volumes"])
    assert mounts["/store"] in compose["volumes"]
    assert sweep["command"][sweep["command"].index("--store") + 1] == "/store"
    assert sweep["command"][sweep["command"].index("--scheduler") + 1] == "tcp://scheduler:8786"
    spec_path = Path(sweep["command"][1])
    host_dir = (DEPLOY / mounts[str(spec_path.parent)]).resolve()
    load_spec(host_dir / spec_path.name)


# --- Dockerfile -------------------------------------------------------------------------------


def test_dockerfile_is_slim_python_non_root_with_the_xialpha_entrypoint():
    instructions = _dockerfile()
    assert all(args.split()[0] == "python:3.11-slim" for word, args in instructions if word == "FROM")
    final = _final_stage()
    words = [word for word, _ in final]
    users = [args for word, args in final if word == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0")
    assert users[-1] == f"{IMAGE_UID}:{IMAGE_UID}"
    assert f"--uid {IMAGE_UID}" in " ".join(args for word, args in final if word == "RUN")
    assert _entrypoint() == ["xialpha"]
    assert words.index("USER") < words.index("ENTRYPOINT")
    assert json.loads(dict(final)["CMD"]) == ["--help"]
    copied = " ".join(args for word, args in instructions if word == "COPY")
    assert "pyproject.toml" in copied and "xialpha" in copied


def test_dockerignore_keeps_only_what_the_build_copies():
    """At the root of the build context: the legacy builder, buildah and podman read only that one
    (BuildKit would prefer deploy/Dockerfile.dockerignore, so there must be none)."""
    assert not (DEPLOY / "Dockerfile.dockerignore").exists()
    lines = [l for l in (REPO / ".dockerignore").read_text().splitlines() if l and not l.startswith("#")]
    assert lines[0] == "*"
    kept = {l[1:].rstrip("/") for l in lines if l.startswith("!")}
    copied = {
        part.rstrip("/").removeprefix("./")
        for word, args in _dockerfile()
        if word == "COPY" and "--from" not in args
        for part in args.split()[:-1]
    }
    assert copied <= kept


# Flags each instruction may carry in the legacy builder (docker build without BuildKit, buildah, podman);
# anything else (RUN --mount/--network/--security, COPY --link/--chmod/--parents, ADD --checksum) needs BuildKit.
LEGACY_FLAGS = {"FROM": {"--platform"}, "COPY": {"--from", "--chown"}, "ADD": {"--chown"}}


def test_dockerfile_uses_only_syntax_every_builder_reads():
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    # Parser directives (`# syntax=` pulls a BuildKit frontend image) are comments at the very top.
    header = [line for line in text.splitlines() if line.strip()][:5]
    assert not any(re.match(r"#\s*syntax\s*=", line, re.I) for line in header)
    assert "<<" not in text  # heredocs are BuildKit-only
    for word, args in _dockerfile():
        flags = {token.split("=")[0] for token in itertools.takewhile(lambda t: t.startswith("--"), args.split())}
        assert flags <= LEGACY_FLAGS.get(word, set()), (
            f"{word} {args}: {flags - LEGACY_FLAGS.get(word, set())} needs BuildKit"
        )
    assert dict(_final_stage()).get("STOPSIGNAL", "SIGTERM") == "SIGTERM"  # what xialpha handles as PID 1


# --- SLURM ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sweep.sbatch", "allocation.sbatch"])
def test_sbatch_scripts_are_valid_bash_with_directives_before_commands(name):
    path = DEPLOY / "slurm" / name
    subprocess.run(["bash", "-n", str(path)], check=True, timeout=30)
    lines = path.read_text().splitlines()
    directives = [i for i, l in enumerate(lines) if l.startswith("#SBATCH")]
    first_command = next(i for i, l in enumerate(lines) if l.strip() and not l.startswith("#"))
    assert directives and max(directives) < first_command  # sbatch ignores directives after a command
    assert all(re.fullmatch(r"#SBATCH --[a-z-]+=\S+", lines[i]) for i in directives)
    default_spec = re.search(r'spec="\$\{1:-([^}]+)\}"', path.read_text()).group(1)
    load_spec(REPO / default_spec)


def test_readme_explains_every_deploy_file():
    readme = (DEPLOY / "README.md").read_text(encoding="utf-8")
    for path in DEPLOY.rglob("*"):
        if (
            path.is_file()
            and path.name != "README.md"
            and "cron" not in path.parts
            and path.name != "drift-cronjob.yaml"
        ):
            assert path.name in readme, f"deploy/README.md does not mention {path.relative_to(DEPLOY)}"
    assert "## What was run for real, and what was only validated" in readme
    assert "The image was not built" in readme  # says so: no base image can be pulled here
