"""A minimal in-memory Kubernetes API server, enough for `helm install` to run end to end.

helm-sdkpy exposes Helm's install action but no `template`/dry-run, and install talks to a
cluster. This stub answers discovery for the API groups the chart uses, stores what Helm creates,
reports hook Jobs as complete, and answers list/watch, so that Helm renders and "installs" the
chart entirely in memory. Nothing here pretends to validate anything: the rendered manifests are
checked afterwards with kubernetes-validate and checkov.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

# (group, version) -> [(plural, kind, namespaced)]
RESOURCES: dict[tuple[str, str], list[tuple[str, str, bool]]] = {
    ("", "v1"): [
        ("configmaps", "ConfigMap", True),
        ("secrets", "Secret", True),
        ("services", "Service", True),
        ("serviceaccounts", "ServiceAccount", True),
        ("pods", "Pod", True),
        ("events", "Event", True),
        ("endpoints", "Endpoints", True),
        ("persistentvolumeclaims", "PersistentVolumeClaim", True),
        ("namespaces", "Namespace", False),
    ],
    ("apps", "v1"): [
        ("deployments", "Deployment", True),
        ("replicasets", "ReplicaSet", True),
        ("statefulsets", "StatefulSet", True),
        ("daemonsets", "DaemonSet", True),
    ],
    ("batch", "v1"): [("jobs", "Job", True), ("cronjobs", "CronJob", True)],
    ("networking.k8s.io", "v1"): [
        ("ingresses", "Ingress", True),
        ("networkpolicies", "NetworkPolicy", True),
        ("ingressclasses", "IngressClass", False),
    ],
    ("autoscaling", "v2"): [("horizontalpodautoscalers", "HorizontalPodAutoscaler", True)],
    ("policy", "v1"): [("poddisruptionbudgets", "PodDisruptionBudget", True)],
    ("rbac.authorization.k8s.io", "v1"): [
        ("roles", "Role", True),
        ("rolebindings", "RoleBinding", True),
        ("clusterroles", "ClusterRole", False),
        ("clusterrolebindings", "ClusterRoleBinding", False),
    ],
    ("monitoring.coreos.com", "v1"): [
        ("servicemonitors", "ServiceMonitor", True),
        ("podmonitors", "PodMonitor", True),
        ("prometheusrules", "PrometheusRule", True),
    ],
}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class FakeKubeAPI:
    def __init__(self, kube_version: str):
        self.kube_version = kube_version
        self.objects: dict[tuple, dict] = {}
        self.requests: list[str] = []
        self.lock = threading.Lock()
        self.rv = 1
        self.closing = False
        handler = type("Handler", (_Handler,), {"api": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def kubeconfig(self) -> str:
        return (
            "apiVersion: v1\nkind: Config\n"
            f"clusters:\n- name: fake\n  cluster:\n    server: {self.url}\n"
            "users:\n- name: fake\n  user: {}\n"
            "contexts:\n- name: fake\n  context:\n    cluster: fake\n    user: fake\n"
            "current-context: fake\n"
        )

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.closing = True
        self.server.shutdown()
        self.server.server_close()

    def next_rv(self) -> str:
        self.rv += 1
        return str(self.rv)


def _resource(group: str, version: str, plural: str):
    for p, kind, namespaced in RESOURCES.get((group, version), []):
        if p == plural:
            return kind, namespaced
    return None


class _Handler(BaseHTTPRequestHandler):
    api: FakeKubeAPI
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):  # quiet
        pass

    # -- helpers -----------------------------------------------------------------------------
    def _send(self, code: int, body: dict):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _status(self, code: int, reason: str, message: str, details: dict | None = None):
        self._send(
            code,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure" if code >= 400 else "Success",
                "message": message,
                "reason": reason,
                "details": details or {},
                "code": code,
            },
        )

    def _body(self) -> dict:
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b"{}"
        return json.loads(raw or b"{}")

    def _discovery(self, path: str) -> bool:
        if path == "/version":
            major, minor = self.api.kube_version.split(".")[:2]
            self._send(
                200,
                {
                    "major": major,
                    "minor": minor,
                    "gitVersion": "v" + self.api.kube_version,
                    "platform": "linux/amd64",
                    "goVersion": "go1.24.0",
                    "compiler": "gc",
                },
            )
            return True
        if path == "/api":
            self._send(
                200,
                {
                    "kind": "APIVersions",
                    "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:6443"}
                    ],
                },
            )
            return True
        if path == "/apis":
            groups: dict[str, list[str]] = {}
            for g, v in RESOURCES:
                if g:
                    groups.setdefault(g, []).append(v)
            self._send(
                200,
                {
                    "kind": "APIGroupList",
                    "apiVersion": "v1",
                    "groups": [
                        {
                            "name": g,
                            "versions": [{"groupVersion": f"{g}/{v}", "version": v} for v in vs],
                            "preferredVersion": {"groupVersion": f"{g}/{vs[0]}", "version": vs[0]},
                        }
                        for g, vs in groups.items()
                    ],
                },
            )
            return True
        if path == "/openapi/v3":
            # The OpenAPI v3 index. Each group-version document below only says that PATCH
            # accepts `fieldValidation`, i.e. that the server validates: kubectl's client-side
            # validation (which Helm requests for hooks) then defers to the server.
            self._send(
                200,
                {
                    "paths": {
                        (f"apis/{g}/{v}" if g else f"api/{v}"): {
                            "serverRelativeURL": f"/openapi/v3/{'apis/' + g if g else 'api'}/{v}"
                        }
                        for g, v in RESOURCES
                    }
                },
            )
            return True
        if path.startswith("/openapi/v3/"):
            rest = path[len("/openapi/v3/"):].split("/")
            gv = ("", rest[1]) if rest[0] == "api" else (rest[1], rest[2])
            if gv not in RESOURCES:
                return False
            prefix = f"/apis/{gv[0]}/{gv[1]}" if gv[0] else f"/api/{gv[1]}"
            paths = {}
            for plural, kind, namespaced in RESOURCES[gv]:
                item = (
                    f"{prefix}/namespaces/{{namespace}}/{plural}/{{name}}"
                    if namespaced
                    else f"{prefix}/{plural}/{{name}}"
                )
                paths[item] = {
                    "patch": {
                        "x-kubernetes-group-version-kind": {
                            "group": gv[0], "version": gv[1], "kind": kind,
                        },
                        "parameters": [
                            {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}}
                        ],
                        "responses": {"200": {"description": "OK"}},
                    }
                }
            self._send(
                200,
                {
                    "openapi": "3.0.0",
                    "info": {"title": "Kubernetes", "version": "v" + self.api.kube_version},
                    "paths": paths,
                    "components": {"schemas": {}},
                },
            )
            return True
        parts = path.strip("/").split("/")
        gv = None
        if parts[0] == "api" and len(parts) == 2:
            gv = ("", parts[1])
        elif parts[0] == "apis" and len(parts) == 3:
            gv = (parts[1], parts[2])
        if gv is None:
            return False
        if gv not in RESOURCES:
            self._status(404, "NotFound", "the server could not find the requested resource")
            return True
        self._send(
            200,
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": f"{gv[0]}/{gv[1]}" if gv[0] else gv[1],
                "resources": [
                    {
                        "name": plural,
                        "singularName": kind.lower(),
                        "namespaced": namespaced,
                        "kind": kind,
                        "verbs": [
                            "create", "delete", "deletecollection", "get",
                            "list", "patch", "update", "watch",
                        ],
                    }
                    for plural, kind, namespaced in RESOURCES[gv]
                ],
            },
        )
        return True

    def _parse(self, path: str):
        """-> (group, version, plural, namespace, name, subresource) or None."""
        parts = path.strip("/").split("/")
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return None
        ns = None
        if len(rest) >= 3 and rest[0] == "namespaces":
            # /namespaces/{ns}/{plural}[/{name}[/{subresource}]]
            ns, rest = rest[1], rest[2:]
        if not rest:
            return None
        plural = rest[0]
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        return group, version, plural, ns, name, sub

    # -- verbs -------------------------------------------------------------------------------
    def do_GET(self):
        u = urlparse(self.path)
        self.api.requests.append(f"GET {self.path}")
        if self._discovery(u.path):
            return
        p = self._parse(u.path)
        if p is None or _resource(p[0], p[1], p[2]) is None:
            self._status(404, "NotFound", "the server could not find the requested resource")
            return
        group, version, plural, ns, name, _sub = p
        kind, _ = _resource(group, version, plural)
        q = parse_qs(u.query)
        if name is not None:
            obj = self.api.objects.get((group, plural, ns, name))
            if obj is None:
                self._status(
                    404, "NotFound", f'{plural}.{group} "{name}" not found',
                    {"name": name, "group": group, "kind": plural},
                )
            else:
                self._send(200, obj)
            return
        items = [
            o for (g, pl, n, _nm), o in list(self.api.objects.items())
            if g == group and pl == plural and (ns is None or n == ns)
        ]
        for sel in q.get("fieldSelector", []):
            for term in sel.split(","):
                if term.startswith("metadata.name="):
                    items = [o for o in items if o["metadata"]["name"] == term.split("=", 1)[1]]
        if q.get("watch", [""])[0] in ("true", "1"):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            api_version = f"{group}/{version}" if group else version
            events = [{"type": "ADDED", "object": o} for o in items]
            # The "watch list" protocol (sendInitialEvents=true) ends the initial state with a
            # bookmark carrying this annotation.
            events.append(
                {
                    "type": "BOOKMARK",
                    "object": {
                        "kind": kind,
                        "apiVersion": api_version,
                        "metadata": {
                            "resourceVersion": str(self.api.rv),
                            "annotations": {"k8s.io/initial-events-end": "true"},
                        },
                    },
                }
            )
            try:
                for e in events:
                    self.wfile.write(json.dumps(e).encode() + b"\n")
                self.wfile.flush()
                # Hold the watch open (nothing else will change) until the client or the
                # server goes away.
                deadline = time.monotonic() + min(float(q.get("timeoutSeconds", ["30"])[0]), 30.0)
                while time.monotonic() < deadline and not self.api.closing:
                    time.sleep(0.1)
            except (BrokenPipeError, ConnectionResetError):
                pass
            return
        api_version = f"{group}/{version}" if group else version
        self._send(
            200,
            {
                "kind": kind + "List",
                "apiVersion": api_version,
                "metadata": {"resourceVersion": str(self.api.rv)},
                "items": items,
            },
        )

    def do_POST(self):
        u = urlparse(self.path)
        self.api.requests.append(f"POST {self.path}")
        p = self._parse(u.path)
        if p is None or _resource(p[0], p[1], p[2]) is None:
            self._status(404, "NotFound", "the server could not find the requested resource")
            return
        group, _version, plural, ns, _name, _sub = p
        obj = self._body()
        meta = obj.setdefault("metadata", {})
        name = meta.get("name")
        key = (group, plural, ns, name)
        with self.api.lock:
            if key in self.api.objects:
                self._status(409, "AlreadyExists", f'{plural} "{name}" already exists')
                return
            if ns is not None:
                meta["namespace"] = ns
            meta.update(
                uid=str(uuid.uuid4()),
                resourceVersion=self.api.next_rv(),
                creationTimestamp=_now(),
                generation=1,
            )
            if obj.get("kind") == "Job":
                obj["status"] = {
                    "startTime": _now(),
                    "completionTime": _now(),
                    "succeeded": 1,
                    "conditions": [
                        {"type": "SuccessCriteriaMet", "status": "True"},
                        {"type": "Complete", "status": "True"},
                    ],
                }
            if obj.get("kind") == "Pod":
                obj["status"] = {"phase": "Succeeded"}
            self.api.objects[key] = obj
        self._send(201, obj)

    def do_PUT(self):
        u = urlparse(self.path)
        self.api.requests.append(f"PUT {self.path}")
        p = self._parse(u.path)
        if p is None or p[4] is None:
            self._status(404, "NotFound", "not found")
            return
        group, _v, plural, ns, name, _sub = p
        obj = self._body()
        with self.api.lock:
            obj.setdefault("metadata", {})["resourceVersion"] = self.api.next_rv()
            self.api.objects[(group, plural, ns, name)] = obj
        self._send(200, obj)

    def do_PATCH(self):
        u = urlparse(self.path)
        self.api.requests.append(f"PATCH {self.path}")
        p = self._parse(u.path)
        if p is None or p[4] is None:
            self._status(404, "NotFound", "not found")
            return
        group, _v, plural, ns, name, _sub = p
        self._body()
        obj = self.api.objects.get((group, plural, ns, name))
        if obj is None:
            self._status(404, "NotFound", f'{plural} "{name}" not found')
            return
        self._send(200, obj)

    def do_DELETE(self):
        u = urlparse(self.path)
        self.api.requests.append(f"DELETE {self.path}")
        p = self._parse(u.path)
        if p is None or p[4] is None:
            self._status(404, "NotFound", "not found")
            return
        group, _v, plural, ns, name, _sub = p
        with self.api.lock:
            obj = self.api.objects.pop((group, plural, ns, name), None)
        if obj is None:
            self._status(
                404, "NotFound", f'{plural} "{name}" not found',
                {"name": name, "group": group, "kind": plural},
            )
            return
        self._status(200, "", "deleted", {"name": name, "group": group, "kind": plural})
