"""Lint, render, schema-validate and checkov-scan the merchantd chart (called by .ci/chart-check).

1. Helm's own lint (helm-sdkpy's Lint, i.e. Helm v4's `action.Lint`) on the chart with its default
   values and once per `ci/*-values.yaml` variant (merged into a copy's values.yaml, since the
   binding lints with the chart's own values only).
2. Helm's own rendering: helm-sdkpy has no `template`/dry-run, so each variant is installed, hooks
   and all, into an in-memory fake Kubernetes API (fake_kube_api.py) with Helm's memory storage
   driver; the release record carries the rendered manifests and hooks. The defaults release is
   then upgraded to the all-on values, which exercises the pre-upgrade path.
3. kubernetes-validate (strict: unknown fields are errors) on every rendered document, against the
   chart's minimum Kubernetes version and the newest one the package ships. The prometheus-operator
   kinds are not core Kubernetes; they are checked against the schemas in CRD_SCHEMAS below, and
   their PromQL only for balanced brackets and known metric names. Also: the rendered
   merchantd.toml parses and uses only keys listed in docs/configuration.md, chart-stored tenant
   manifests parse as TOML, and the Grafana dashboard is JSON whose queries use known metrics.
4. checkov (framework kubernetes) on all rendered manifests, and checkov (framework dockerfile) on
   the repository's Dockerfile. Every failed check fails the run; a check deliberately left unmet
   carries its reason where checkov reads it (a `checkov.io/skipN: CKV_ID=reason` annotation on
   the resource, a `# checkov:skip=CKV_ID:reason` comment in the Dockerfile), and the skips are
   listed with their reasons.

Exit status: 0 when everything passed, 1 otherwise.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jsonschema
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the work tree

from fake_kube_api import FakeKubeAPI  # noqa: E402

RELEASE = "shop"
NAMESPACE = "commerce"
# Helm lint severities (helm.sh/helm/v4/pkg/chart/v2/lint/support).
SEVERITY = {0: "UNKNOWN", 1: "INFO", 2: "WARNING", 3: "ERROR"}

# --- Schemas for the prometheus-operator kinds ------------------------------------------------
# Written for this chart from the monitoring.coreos.com/v1 API reference: the fields the chart uses
# and their common neighbours, strictly (an unknown or misspelt field is an error).
_labels = {"type": "object", "additionalProperties": {"type": "string"}}
_duration = {"type": "string", "pattern": r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$"}
_meta = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", "maxLength": 253},
        "namespace": {"type": "string"},
        "labels": _labels,
        "annotations": _labels,
    },
}
_label_selector = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "matchLabels": _labels,
        "matchExpressions": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["key", "operator"],
                "additionalProperties": False,
                "properties": {
                    "key": {"type": "string"},
                    "operator": {"enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
                    "values": {"type": "array", "items": {"type": "string"}},
                },
            },
        },
    },
}
CRD_SCHEMAS = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"): {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": "ServiceMonitor"},
            "metadata": _meta,
            "spec": {
                "type": "object",
                "required": ["selector", "endpoints"],
                "additionalProperties": False,
                "properties": {
                    "selector": _label_selector,
                    "namespaceSelector": {
                        "type": "object",
                        "additionalProperties": False,
                        "properties": {
                            "any": {"type": "boolean"},
                            "matchNames": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                    "jobLabel": {"type": "string"},
                    "targetLabels": {"type": "array", "items": {"type": "string"}},
                    "podTargetLabels": {"type": "array", "items": {"type": "string"}},
                    "sampleLimit": {"type": "integer", "minimum": 0},
                    "endpoints": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "additionalProperties": False,
                            "properties": {
                                "port": {"type": "string"},
                                "targetPort": {"type": ["integer", "string"]},
                                "path": {"type": "string", "pattern": "^/"},
                                "scheme": {"enum": ["http", "https", "HTTP", "HTTPS"]},
                                "interval": _duration,
                                "scrapeTimeout": _duration,
                                "honorLabels": {"type": "boolean"},
                                "honorTimestamps": {"type": "boolean"},
                                "params": {"type": "object"},
                                "relabelings": {"type": "array", "items": {"type": "object"}},
                                "metricRelabelings": {"type": "array", "items": {"type": "object"}},
                                "tlsConfig": {"type": "object"},
                                "authorization": {"type": "object"},
                                "basicAuth": {"type": "object"},
                            },
                        },
                    },
                },
            },
        },
    },
    ("monitoring.coreos.com/v1", "PrometheusRule"): {
        "type": "object",
        "required": ["apiVersion", "kind", "metadata", "spec"],
        "additionalProperties": False,
        "properties": {
            "apiVersion": {"const": "monitoring.coreos.com/v1"},
            "kind": {"const": "PrometheusRule"},
            "metadata": _meta,
            "spec": {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "groups": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name", "rules"],
                            "additionalProperties": False,
                            "properties": {
                                "name": {"type": "string", "minLength": 1},
                                "interval": _duration,
                                "limit": {"type": "integer"},
                                "partial_response_strategy": {"type": "string"},
                                "labels": _labels,
                                "rules": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["expr"],
                                        "additionalProperties": False,
                                        "oneOf": [
                                            {"required": ["alert"], "not": {"required": ["record"]}},
                                            {"required": ["record"], "not": {"required": ["alert"]}},
                                        ],
                                        "properties": {
                                            "alert": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                                            "record": {"type": "string", "pattern": "^[a-zA-Z_:][a-zA-Z0-9_:]*$"},
                                            "expr": {"type": ["string", "integer"], "minLength": 1},
                                            "for": _duration,
                                            "keep_firing_for": _duration,
                                            "labels": _labels,
                                            "annotations": _labels,
                                        },
                                    },
                                },
                            },
                        },
                    }
                },
            },
        },
    },
}


# Metrics merchantd exports (DESIGN §7, docs/operations.md), plus the ones the alerts and the
# dashboard take from Prometheus itself and kube-state-metrics. merchant_cached_records and
# db_commits_total arrive with the scale-out work; the dashboard shows them when they exist.
KNOWN_METRICS = {
    "webhook_deliveries_total", "webhook_delivery_latency_seconds",
    "webhook_attempt_duration_seconds", "webhook_queue_depth", "webhook_oldest_pending_seconds",
    "events_appended_total", "event_stream_clients",
    "http_requests_total", "http_request_duration_seconds", "merchant_actors_active",
    "merchant_actor_activations_total", "actor_mailbox_wait_seconds", "merchant_write_batch_size",
    "cache_requests_total", "oauth_tokens_issued_total", "oauth_token_errors_total",
    "db_query_duration_seconds", "merchant_cached_records", "db_commits_total",
    "up", "kube_deployment_status_replicas_available", "kube_deployment_spec_replicas",
}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")


def unknown_metrics(expr: str) -> list[str]:
    """Metric names used with a selector ({...}) or a range ([...]) that merchantd does not export."""
    bad = []
    for m in re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\s*[{\[]", expr):
        base = m
        for suffix in HISTOGRAM_SUFFIXES:
            if m.endswith(suffix) and m[: -len(suffix)] in KNOWN_METRICS:
                base = m[: -len(suffix)]
        if base not in KNOWN_METRICS:
            bad.append(m)
    return bad


def described_values(chart: Path) -> list[str]:
    """Paths of the values that values.yaml documents with a `# --` comment."""
    paths, stack, described = [], [], False
    for line in (chart / "values.yaml").read_text().splitlines():
        if re.match(r"^\s*# -- ", line):
            described = True
            continue
        m = re.match(r"^(\s*)([A-Za-z_][A-Za-z0-9_]*):", line)
        if m:
            indent = len(m.group(1))
            while stack and stack[-1][0] >= indent:
                stack.pop()
            stack.append((indent, m.group(2)))
            if described:
                paths.append(".".join(k for _, k in stack))
            described = False
    return paths


def check_readme(chart: Path, report: Report) -> int:
    """The chart README's values table names every documented value."""
    readme = (chart / "README.md").read_text()
    paths = described_values(chart)
    for p in paths:
        if f"| `{p}` |" not in readme:
            report.fail(f"README.md: the values table lacks `{p}`")
    return len(paths)


def check_dashboard(chart: Path, report: Report) -> int:
    """The Grafana dashboard must be JSON whose queries use merchantd's metrics."""
    path = chart / "dashboards" / "merchantd.json"
    try:
        dash = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        report.fail(f"dashboard {path.name}: {e}")
        return 0
    n = 0
    ids = set()
    for p in dash.get("panels", []):
        if p.get("id") in ids:
            report.fail(f"dashboard: duplicate panel id {p.get('id')}")
        ids.add(p.get("id"))
        for t in p.get("targets", []):
            expr = t.get("expr", "")
            n += 1
            for problem in promql_problems(expr):
                report.fail(f"dashboard panel {p.get('title')!r}: {problem}")
            for m in unknown_metrics(expr):
                report.fail(f"dashboard panel {p.get('title')!r}: unknown metric {m}")
    return n


def promql_problems(expr: str) -> list[str]:
    """Cheap structural checks of a PromQL expression (no PromQL parser is available offline)."""
    problems = []
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    in_str = None
    for ch in expr:
        if in_str:
            if ch == in_str:
                in_str = None
            continue
        if ch in "\"'`":
            in_str = ch
        elif ch in "([{":
            stack.append(ch)
        elif ch in ")]}":
            if not stack or stack.pop() != pairs[ch]:
                problems.append(f"unbalanced {ch!r}")
                break
    if stack:
        problems.append(f"unclosed {stack[-1]!r}")
    if in_str:
        problems.append("unterminated string")
    if "{{" in expr or "}}" in expr:
        problems.append("template braces left in expression")
    return problems


# --- helpers ----------------------------------------------------------------------------------
def deep_merge(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in override.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that rejects duplicate keys (PyYAML keeps the last one silently, while the
    Kubernetes API server rejects them or drops one; a template that emits a key twice is a bug)."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def documents(text: str) -> list[tuple[str, dict]]:
    """Helm's manifest text split into (raw text, parsed document) pairs, empty ones dropped."""
    out = []
    for chunk in re.split(r"(?m)^---\s*$", text):
        doc = yaml.load(chunk, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
        if doc:
            out.append((chunk.strip("\n") + "\n", doc))
    return out


class Report:
    def __init__(self) -> None:
        self.failures: list[str] = []
        self.lines: list[str] = []

    def fail(self, msg: str) -> None:
        self.failures.append(msg)
        print(f"FAIL {msg}", flush=True)

    def note(self, msg: str) -> None:
        print(msg, flush=True)

    def summary(self, msg: str) -> None:
        self.lines.append(msg)

    def step(self, before: int, ok_text: str, name: str) -> None:
        """Closes a step that started when there were `before` failures."""
        n = len(self.failures) - before
        self.lines.append(ok_text if n == 0 else f"{name}: FAILED ({n} problem(s) above)")


# --- steps ------------------------------------------------------------------------------------
async def lint(helm, chart: Path, variants: dict[str, dict], work: Path, report: Report) -> None:
    infos = 0
    before = len(report.failures)
    cfg = helm.Configuration(namespace=NAMESPACE)
    for name, values in variants.items():
        target = chart
        if values:
            target = work / "lint" / name / chart.name
            shutil.copytree(chart, target)
            merged = deep_merge(yaml.safe_load((chart / "values.yaml").read_text()), values)
            (target / "values.yaml").write_text(yaml.safe_dump(merged, sort_keys=False))
        result = await helm.Lint(cfg).run(str(target))
        msgs = result.get("Messages") or []
        errors = result.get("Errors") or []
        bad = [m for m in msgs if m.get("Severity", 0) >= 2]
        for m in msgs:
            sev = SEVERITY.get(m.get("Severity"), str(m.get("Severity")))
            # Helm's lint messages are Go errors, which the binding's JSON renders as {}: only the
            # severity and the file survive. Rendering (next step) reports template errors in full.
            err = m.get("Err")
            text = f": {err}" if err not in (None, {}, "") else " (message text not passed on by helm-sdkpy)"
            report.note(f"  lint[{name}] {sev} {m.get('Path')}{text}")
        infos += sum(1 for m in msgs if m.get("Severity") == 1)
        if bad or errors:
            report.fail(
                f"helm lint [{name}]: {len(bad)} warning/error message(s), {len(errors)} error(s)"
            )
    report.step(
        before,
        f"helm lint: {len(variants)} variant(s), 0 errors, 0 warnings, {infos} info message(s)",
        "helm lint",
    )


async def render(
    helm, chart: Path, variants: dict[str, dict], kube_version: str, out: Path, report: Report
) -> dict[str, list[dict]]:
    rendered: dict[str, list[dict]] = {}
    before = len(report.failures)
    for name, values in variants.items():
        with FakeKubeAPI(kube_version) as api:
            cfg = helm.Configuration(namespace=NAMESPACE, kubeconfig=api.kubeconfig())
            try:
                rel = await helm.Install(cfg).run(
                    RELEASE, str(chart), values=values or None, wait=False, timeout=120
                )
            except Exception as e:  # noqa: BLE001 - any Helm failure is a check failure
                report.fail(f"render [{name}]: {e}")
                continue
            text = rel.get("manifest", "")
            hooks = rel.get("hooks") or []
            for h in hooks:
                text += f"\n---\n# Source: {h.get('path')} (hook: {','.join(h.get('events', []))})\n"
                text += h.get("manifest", "")
            try:
                pairs = documents(text)
            except yaml.YAMLError as e:
                report.fail(f"render [{name}]: the rendered YAML does not load: {e}")
                continue
            docs = [doc for _, doc in pairs]
            rendered[name] = docs
            d = out / name
            d.mkdir(parents=True)
            # Helm's own text, one file per document, for checkov and for people to read.
            for i, (raw, doc) in enumerate(pairs):
                fname = f"{i:02d}-{doc['kind'].lower()}-{doc['metadata']['name']}.yaml"
                (d / fname).write_text(raw)
            notes = (rel.get("info") or {}).get("notes", "")
            (out / f"{name}.NOTES.txt").write_text(notes)
            if not notes.strip():
                report.fail(f"render [{name}]: NOTES.txt rendered empty")
            kinds = sorted({d["kind"] for d in docs})
            report.note(f"  render[{name}] {len(docs)} documents: {', '.join(kinds)}")

            if name == "defaults" and "all-on" in variants:
                # Upgrade this release to every optional part on: the pre-upgrade hook path.
                try:
                    up = await helm.Upgrade(cfg).run(
                        RELEASE, str(chart), values=variants["all-on"], wait=False, timeout=120
                    )
                    ran = [
                        h["name"] for h in up.get("hooks") or []
                        if "pre-upgrade" in h.get("events", [])
                        and (h.get("last_run") or {}).get("phase") == "Succeeded"
                    ]
                    if up.get("version") != 2 or (variants["all-on"].get("migrations", {}).get("enabled", True) and not ran):
                        report.fail(f"upgrade defaults -> all-on: revision {up.get('version')}, pre-upgrade hooks run: {ran}")
                    else:
                        report.note(f"  upgrade[defaults -> all-on] ok: revision 2, pre-upgrade hook(s) {', '.join(ran)} succeeded")
                except Exception as e:  # noqa: BLE001
                    report.fail(f"upgrade defaults -> all-on: {e}")
    report.step(
        before,
        f"helm render: {len(variants)} variant(s) installed (hooks included) into a fake Kubernetes "
        f"{kube_version} API, {sum(len(v) for v in rendered.values())} documents; "
        "upgrade defaults -> all-on ok",
        "helm render",
    )
    return rendered


def documented_config_keys(repo: Path) -> set[str]:
    """The keys of merchantd.toml as listed in docs/configuration.md (first column of the table)."""
    keys: set[str] = set()
    for line in (repo / "docs" / "configuration.md").read_text().splitlines():
        if line.startswith("| `"):
            keys.update(re.findall(r"`([a-z0-9_]+)`", line.split("|")[1]))
    return keys


def check_merchantd_files(rendered: dict[str, list[dict]], repo: Path, report: Report) -> int:
    """merchantd.toml must parse and use documented keys only (merchantd rejects unknown keys);
    tenant manifests stored by the chart must parse as TOML."""
    import tomllib

    known = documented_config_keys(repo)
    if not known:
        report.fail("no configuration keys found in docs/configuration.md")
    checked = 0
    for name, docs in rendered.items():
        for doc in docs:
            data = doc.get("stringData") or doc.get("data") or {}
            for fname, text in data.items():
                if not fname.endswith(".toml"):
                    continue
                ident = f"{name}:{doc['kind']}/{doc['metadata']['name']}/{fname}"
                try:
                    parsed = tomllib.loads(text)
                except tomllib.TOMLDecodeError as e:
                    report.fail(f"toml {ident}: {e}")
                    continue
                checked += 1
                if fname == "merchantd.toml":
                    unknown = sorted(set(parsed) - known)
                    if unknown:
                        report.fail(f"config {ident}: keys not in docs/configuration.md: {unknown}")
                    for k in ("bind", "metrics_bind"):
                        if not str(parsed.get(k, "")).startswith("0.0.0.0:"):
                            report.fail(f"config {ident}: {k} must listen on 0.0.0.0 in a pod")
                    if "database_url" in parsed:
                        report.fail(f"config {ident}: database_url must come from the Secret, not the ConfigMap")
    return checked


def validate(
    rendered: dict[str, list[dict]], versions: list[str], chart: Path, report: Report
) -> None:
    import kubernetes_validate

    checked = 0
    crd = 0
    before = len(report.failures)
    for name, docs in rendered.items():
        for doc in docs:
            ident = f"{name}:{doc.get('kind')}/{doc.get('metadata', {}).get('name')}"
            key = (doc.get("apiVersion"), doc.get("kind"))
            if key in CRD_SCHEMAS:
                errs = sorted(
                    jsonschema.Draft7Validator(CRD_SCHEMAS[key]).iter_errors(doc),
                    key=lambda e: list(e.path),
                )
                for e in errs:
                    report.fail(f"schema {ident} (bundled {key[1]} schema) at {list(e.path)}: {e.message}")
                if doc["kind"] == "PrometheusRule":
                    for g in doc["spec"].get("groups", []):
                        for r in g.get("rules", []):
                            expr = str(r.get("expr", ""))
                            for p in promql_problems(expr) + [
                                f"unknown metric {m}" for m in unknown_metrics(expr)
                            ]:
                                report.fail(f"promql {ident} {r.get('alert') or r.get('record')}: {p}")
                crd += 1
                continue
            for v in versions:
                try:
                    kubernetes_validate.validate(doc, v, strict=True)
                except kubernetes_validate.ValidationError as e:
                    path = "/".join(str(p) for p in e.path)
                    report.fail(f"schema {ident} (Kubernetes {v}) at {path}: {e.message}")
                except kubernetes_validate.SchemaNotFoundError as e:
                    report.fail(f"schema {ident}: {e.message}")
            checked += 1
    report.step(
        before,
        f"kubernetes-validate: {checked} documents valid (strict) against Kubernetes "
        f"{' and '.join(versions)}; {crd} prometheus-operator documents valid against the bundled "
        "CRD schemas",
        "kubernetes-validate",
    )
    before = len(report.failures)
    tomls = check_merchantd_files(rendered, HERE.parent.parent, report)
    queries = check_dashboard(chart, report)
    documented = check_readme(chart, report)
    report.step(
        before,
        f"consistency: {tomls} rendered TOML files parse (merchantd.toml keys as in "
        f"docs/configuration.md); the dashboard's {queries} queries use known metrics; the README "
        f"lists all {documented} values",
        "consistency",
    )


def run_checkov(checkov: str, target: list[str], framework: str, label: str, report: Report) -> None:
    env = dict(os.environ)
    # Offline: no platform, no guideline download, no telemetry or version check.
    env.update(
        BC_SKIP_MAPPING="TRUE",
        CHECKOV_SKIP_DOWNLOAD="TRUE",
        ENABLE_SCA_PACKAGE_SCAN="FALSE",
        CHECKOV_RUN_SCA_PACKAGE_SCAN_V2="FALSE",
        CHECKOV_ENABLE_MODULES_FOREACH_HANDLING="FALSE",
        LOG_LEVEL="ERROR",
    )
    before = len(report.failures)
    cmd = [checkov, *target, "--framework", framework, "-o", "json", "--skip-download", "--compact"]
    t = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - t
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report.fail(f"checkov produced no JSON (exit {proc.returncode}): {proc.stderr[-2000:]}")
        report.step(before, "", f"checkov ({label})")
        return
    if isinstance(data, list):
        data = {"results": {k: sum((d.get("results", {}).get(k, []) for d in data), []) for k in
                            ("passed_checks", "failed_checks", "skipped_checks")},
                "summary": data[0].get("summary", {}) if data else {}}
    res = data.get("results", {})
    passed = res.get("passed_checks", [])
    failed = res.get("failed_checks", [])
    skipped = res.get("skipped_checks", [])
    summary = data.get("summary", {})
    if not passed and not failed and not skipped:
        report.fail("checkov scanned nothing")
    if summary.get("parsing_errors"):
        report.fail(f"checkov could not parse {summary['parsing_errors']} file(s)")
    for f in failed:
        report.fail(
            f"checkov {f['check_id']} {f.get('check_name')} on {f.get('resource')} "
            f"({Path(f.get('file_path', '')).as_posix()})"
        )
    reasons: dict[str, set[str]] = {}
    for s in skipped:
        reasons.setdefault(s["check_id"], set()).add(
            (s.get("check_result") or {}).get("suppress_comment", "")
        )
    if skipped:
        report.note(f"  checkov skips in the {label} (each with its reason):")
        for cid, rs in sorted(reasons.items()):
            for r in sorted(rs):
                report.note(f"    {cid}: {r}")
    if proc.returncode != 0 and not failed:
        report.fail(f"checkov exited {proc.returncode}: {proc.stderr[-2000:]}")
    report.step(
        before,
        f"checkov {summary.get('checkov_version', '')} ({label}): {len(passed)} passed, "
        f"{len(failed)} failed, {len(skipped)} skipped on {summary.get('resource_count', '?')} "
        f"resources (suppressed with reasons: {', '.join(sorted(reasons)) or 'none'}) in {elapsed:.0f}s",
        f"checkov ({label})",
    )


async def main_async(args) -> int:
    import helm_sdkpy

    chart = Path(args.chart).resolve()
    report = Report()
    variants: dict[str, dict] = {"defaults": {}}
    for f in sorted((chart / "ci").glob("*-values.yaml")):
        variants[f.name[: -len("-values.yaml")]] = yaml.safe_load(f.read_text()) or {}

    import kubernetes_validate.utils as kvu

    newest = kvu.latest_version()
    versions = [args.min_kube_version, newest] if args.min_kube_version != newest else [newest]

    work = Path(tempfile.mkdtemp(prefix="chart-check-"))
    out = Path(args.out).resolve() if args.out else work / "rendered"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    try:
        t = time.monotonic()
        report.note(f"== helm lint (helm-sdkpy {helm_sdkpy.__version__})")
        await lint(helm_sdkpy, chart, variants, work, report)
        report.note("== helm render (install into an in-memory fake API)")
        rendered = await render(helm_sdkpy, chart, variants, newest, out, report)
        report.note(f"== kubernetes-validate {kubernetes_validate_version()}")
        validate(rendered, versions, chart, report)
        report.note("== checkov")
        if rendered:
            run_checkov(args.checkov, ["-d", str(out)], "kubernetes", "rendered chart", report)
        else:
            report.fail("nothing rendered for checkov to scan")
            report.summary("checkov (rendered chart): FAILED (nothing rendered to scan)")
        dockerfile = HERE.parent.parent / "Dockerfile"
        if dockerfile.exists():
            run_checkov(args.checkov, ["-f", str(dockerfile)], "dockerfile", "Dockerfile", report)
        total = time.monotonic() - t
    finally:
        shutil.rmtree(work, ignore_errors=True)

    failed_steps = [l for l in report.lines if "FAILED" in l]
    print("\nchart-check summary:")
    for line in report.lines:
        print(f"  {line}")
    if args.out:
        print(f"  rendered manifests kept in {out}")
    print(f"  {len(report.failures)} problem(s), {total:.0f}s")
    print(f"chart-check: {len(report.lines) - len(failed_steps)} passed, {len(failed_steps)} failed")
    return 1 if report.failures else 0


def kubernetes_validate_version() -> str:
    from kubernetes_validate.version import __version__

    return __version__


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--chart", default=str(HERE.parent / "merchantd"))
    p.add_argument("--out", help="keep the rendered manifests here")
    p.add_argument("--min-kube-version", default="1.30", help="the chart's kubeVersion floor")
    p.add_argument("--checkov", default=shutil.which("checkov") or "checkov")
    args = p.parse_args()
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
