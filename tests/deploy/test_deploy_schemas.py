"""deploy/ against the real schemas, strictly (an unknown field is an error, as `kubectl apply
--validate=strict` makes it):

- Kubernetes core kinds with kubernetes-validate's schemas, for the oldest Kubernetes the manifests
  support (1.26: CronJob timeZone and Job podFailurePolicy are on by default from there) and the
  newest that kubernetes-validate ships; the pod templates inside the Dask resources as Pods too.
- DaskCluster and DaskJob with the CRD schemas shipped in the dask-kubernetes wheel (the Helm
  chart's CRDs, whose schemas are resolved).
- docker-compose.yml with the Compose Specification schema (what Compose v2 reads; check-jsonschema
  vendors it) and, where Debian's `docker-compose` 1.29 (Compose v1) is installed, `config -q`.
"""

from __future__ import annotations

import copy
import importlib.resources
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from extras import needs

yaml = pytest.importorskip("yaml")

from xialpha.jobs.cluster import kubernetes_cluster_spec  # noqa: E402
from xialpha.spec.sweep import load_spec  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
OLDEST_KUBERNETES = "1.26"
DASK_KINDS = {"DaskCluster": "daskcluster.yaml", "DaskJob": "daskjob.yaml"}
NOT_VALIDATED = {"Kustomization"}  # kustomize's own file, never sent to the API server


def _documents() -> list[tuple[str, dict]]:
    """(file name, document) of every Kubernetes object under deploy/kubernetes."""
    return [
        (path.name, doc)
        for path in sorted(KUBERNETES.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8"))
        if doc and "apiVersion" in doc and doc["kind"] not in NOT_VALIDATED
    ]


def _versions() -> list[str]:
    needs("kubernetes_validate")
    from kubernetes_validate.utils import latest_version, major_minor

    return [OLDEST_KUBERNETES, major_minor(latest_version())]


def _pod_templates(node, where: str = ""):
    """(where, pod spec) for every pod spec (a dict with `containers`) inside a Dask resource."""
    if isinstance(node, dict):
        if isinstance(node.get("containers"), list):
            yield where, node
            return
        for key, value in node.items():
            yield from _pod_templates(value, f"{where}.{key}")


@pytest.mark.parametrize("version", [OLDEST_KUBERNETES, "newest"])
def test_core_kinds_validate_strictly(version):
    kubernetes_validate = needs("kubernetes_validate")
    version = _versions()[0 if version == OLDEST_KUBERNETES else 1]
    checked = []
    for name, doc in _documents():
        if doc["kind"] in DASK_KINDS:
            for where, pod in _pod_templates(doc["spec"]):
                as_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}, "spec": pod}
                _validate(kubernetes_validate, as_pod, version, f"{name} {doc['kind']}{where}")
            continue
        _validate(kubernetes_validate, doc, version, f"{name} {doc['kind']}")
        checked.append(doc["kind"])
    assert {"Namespace", "PersistentVolumeClaim", "ConfigMap", "CronJob"} <= set(checked)


def _validate(kubernetes_validate, doc: dict, version: str, what: str) -> None:
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        pytest.fail(f"{what} on Kubernetes {version}: {exc.message} at {'.'.join(map(str, exc.path))}")


def test_oldest_kubernetes_schema_is_shipped():
    needs("kubernetes_validate")
    from kubernetes_validate.utils import all_versions, major_minor

    assert OLDEST_KUBERNETES in {major_minor(v) for v in all_versions()}


def _dask_crd_schema(kind: str) -> dict:
    """The openAPIV3Schema of a Dask operator CRD from the installed dask-kubernetes wheel, strict:
    every object schema listing its properties refuses others (no preserve-unknown-fields there)."""
    needs("dask_kubernetes")
    crds = importlib.resources.files("dask_kubernetes") / "operator/deployment/helm/dask-kubernetes-operator/crds"
    crd = yaml.safe_load((crds / DASK_KINDS[kind]).read_text(encoding="utf-8"))
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1"]
    schema = _strict(copy.deepcopy(version["schema"]["openAPIV3Schema"]))
    # The API server itself checks apiVersion, kind and metadata, which the CRD schema leaves out.
    schema["properties"].update(
        {"apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"}}
    )
    return schema


def _strict(schema):
    if isinstance(schema, dict):
        if (
            "properties" in schema
            and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")
        ):
            schema["additionalProperties"] = False
        for value in schema.values():
            _strict(value)
    elif isinstance(schema, list):
        for value in schema:
            _strict(value)
    return schema


@pytest.mark.parametrize("kind", sorted(DASK_KINDS))
def test_dask_resources_validate_strictly_against_the_operator_crds(kind):
    schema = _dask_crd_schema(kind)
    docs = [(name, doc) for name, doc in _documents() if doc["kind"] == kind]
    if kind == "DaskCluster":  # what `kind = "kubernetes"` creates, besides the shipped manifest
        docs.append(
            ("config/kubernetes.toml", kubernetes_cluster_spec(load_spec(REPO / "config" / "kubernetes.toml").cluster))
        )
    assert docs
    jsonschema = needs("jsonschema")
    for name, doc in docs:
        errors = sorted(jsonschema.Draft7Validator(schema).iter_errors(doc), key=lambda e: list(e.path))
        assert not errors, f"{name}: " + "; ".join(f"{e.message} at {'.'.join(map(str, e.path))}" for e in errors[:5])


def test_the_strict_crd_check_refuses_an_unknown_field():
    schema = _dask_crd_schema("DaskCluster")
    doc = kubernetes_cluster_spec(load_spec(REPO / "config" / "kubernetes.toml").cluster)
    doc["spec"]["worker"]["spec"]["containers"][0]["comand"] = ["dask", "worker"]
    assert not needs("jsonschema").Draft7Validator(schema).is_valid(doc)


# --- docker compose ---------------------------------------------------------------------------------


def _compose() -> dict:
    return yaml.safe_load((DEPLOY / "docker-compose.yml").read_text(encoding="utf-8"))


def test_compose_file_follows_the_compose_specification():
    jsonschema, vendor = needs("jsonschema"), needs("check_jsonschema.builtin_schemas.vendor")
    schema = json.loads((importlib.resources.files(vendor) / "compose-spec.json").read_text(encoding="utf-8"))
    errors = list(jsonschema.Draft7Validator(schema).iter_errors(_compose()))
    assert not errors, "; ".join(f"{e.message} at {'.'.join(map(str, e.path))}" for e in errors[:5])


def test_compose_file_has_only_what_compose_v1_reads():
    """Compose v1 (1.27+: the specification without `version:`) rejects a top-level `name:`."""
    assert set(_compose()) <= {"services", "volumes", "networks", "secrets", "configs"}


def test_compose_v1_reads_the_compose_file():
    if shutil.which("docker-compose") is None:
        pytest.skip("docker-compose (Compose v1, Debian's package) not installed")
    version = subprocess.run(["docker-compose", "version", "--short"], capture_output=True, text=True, timeout=60)
    if not version.stdout.startswith("1."):
        pytest.skip(f"docker-compose is not Compose v1: {version.stdout.strip()}")
    done = subprocess.run(
        ["docker-compose", "-p", "xialpha", "-f", str(DEPLOY / "docker-compose.yml"), "config", "-q"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
