"""`[cluster] kind = "kubernetes"` against a fake Kubernetes API on 127.0.0.1: xialpha creates the
DaskCluster resource through the real dask-kubernetes KubeCluster and kr8s client, exactly as
kubernetes_cluster_spec (and deploy/kubernetes/daskcluster.yaml) say, and, when no Dask operator
acts on it, deletes it again and stops with a one-line error.

What stays untested here: a real API server, the operator creating pods, pulling the image, and a
sweep running on them (no Kubernetes cluster can run on this machine).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from extras import needs

from xialpha.errors import UserError
from xialpha.jobs.cluster import connect, kubernetes_cluster_spec
from xialpha.spec.sweep import load_spec

needs("dask_kubernetes")

REPO = Path(__file__).resolve().parents[2]
DASK_GROUP = "kubernetes.dask.org/v1"
RESOURCES = {"v1": ["Pod", "Service"], DASK_GROUP: ["DaskCluster", "DaskWorkerGroup", "DaskJob", "DaskAutoscaler"]}


class FakeKubernetes(BaseHTTPRequestHandler):
    """Just enough of the API for kr8s: discovery, create, get/list by name, delete; `requests`
    records (method, path, body) and `objects` holds what was created, by path."""

    requests: list[tuple[str, str, dict | None]]
    objects: dict[str, dict]

    def log_message(self, *args) -> None:
        pass

    def _reply(self, code: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        path = url.path.rstrip("/")
        self.requests.append(("GET", path, None))
        if path == "/version":
            return self._reply(200, {"major": "1", "minor": "30", "gitVersion": "v1.30.0", "platform": "linux/amd64"})
        if path == "/api":
            return self._reply(200, {"kind": "APIVersions", "versions": ["v1"]})
        if path == "/apis":
            version = {"groupVersion": DASK_GROUP, "version": "v1"}
            return self._reply(
                200,
                {
                    "kind": "APIGroupList",
                    "apiVersion": "v1",
                    "groups": [{"name": DASK_GROUP.split("/")[0], "versions": [version], "preferredVersion": version}],
                },
            )
        group = {"/api/v1": "v1", f"/apis/{DASK_GROUP}": DASK_GROUP}.get(path)
        if group:
            return self._reply(
                200,
                {
                    "kind": "APIResourceList",
                    "groupVersion": group,
                    "resources": [
                        {
                            "name": f"{kind.lower()}s",
                            "singularName": kind.lower(),
                            "namespaced": True,
                            "kind": kind,
                            "verbs": ["create", "delete", "get", "list", "patch"],
                        }
                        for kind in RESOURCES[group]
                    ],
                },
            )
        if path in self.objects:
            return self._reply(200, self.objects[path])
        names = {
            selector.split("=", 1)[1]
            for query in parse_qs(url.query).get("fieldSelector", [])
            for selector in query.split(",")
            if selector.startswith("metadata.name=")
        }
        items = [
            obj
            for key, obj in self.objects.items()
            if key.rsplit("/", 1)[0] == path and (not names or obj["metadata"]["name"] in names)
        ]
        if path.endswith("s"):
            return self._reply(200, {"kind": "List", "apiVersion": "v1", "metadata": {}, "items": items})
        self._reply(
            404,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "reason": "NotFound",
                "message": f"{path} not found",
                "code": 404,
            },
        )

    def do_POST(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.requests.append(("POST", path, body))
        created = {**body, "metadata": {**body["metadata"], "namespace": path.split("/")[-2], "uid": "fake-uid"}}
        self.objects[f"{path}/{body['metadata']['name']}"] = created
        self._reply(201, created)

    def do_DELETE(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        self.requests.append(("DELETE", path, None))
        self.objects.pop(path, None)
        self._reply(200, {"kind": "Status", "apiVersion": "v1", "status": "Success"})


@pytest.fixture
def fake_kubernetes(tmp_path, monkeypatch):
    """A fake API server on 127.0.0.1 and a kubeconfig pointing at it (namespace xialpha): its requests."""
    handler = type("Handler", (FakeKubernetes,), {"requests": [], "objects": {}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "fake",
                "clusters": [{"name": "fake", "cluster": {"server": f"http://127.0.0.1:{server.server_address[1]}"}}],
                "users": [{"name": "fake", "user": {"token": "fake"}}],
                "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "fake", "namespace": "xialpha"}}],
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    try:
        yield handler.requests
    finally:
        server.shutdown()
        server.server_close()


def test_kind_kubernetes_creates_the_daskcluster_and_deletes_it_when_no_operator_acts(fake_kubernetes):
    import dask

    spec = load_spec(REPO / "config" / "kubernetes.toml")
    with dask.config.set({"kubernetes.resource-timeout": 2}):
        with pytest.raises(UserError, match=r'^cluster.kind = "kubernetes": .*Dask Operator') as info:
            with connect(spec.cluster):
                pass
    assert "\n" not in str(info.value)
    collection = f"/apis/{DASK_GROUP}/namespaces/xialpha/daskclusters"
    (created,) = [body for method, path, body in fake_kubernetes if method == "POST"]
    assert [path for method, path, _ in fake_kubernetes if method == "POST"] == [collection]
    expected = kubernetes_cluster_spec(spec.cluster)
    expected["metadata"]["namespace"] = "xialpha"  # [cluster] namespace, set by kr8s
    assert created == expected
    assert ("DELETE", f"{collection}/xialpha", None) in fake_kubernetes  # not left behind
