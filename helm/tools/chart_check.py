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
   kinds are not core Kubernetes; they are checked against the schemas in CRD_SCHEMAS below.
4. checkov (framework kubernetes) on all rendered manifests. Every failed check fails the run; a
   check the chart deliberately does not satisfy carries a `checkov.io/skipN: CKV_ID=reason`
   annotation on the resource, and the skips are listed with their reasons.

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


def documents(text: str) -> list[dict]:
    return [d for d in yaml.safe_load_all(text) if d]


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


# --- steps ------------------------------------------------------------------------------------
async def lint(helm, chart: Path, variants: dict[str, dict], work: Path, report: Report) -> None:
    infos = 0
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
            text = m.get("Err") or ""
            text = "" if text == {} else f": {text}"
            report.note(f"  lint[{name}] {sev} {m.get('Path')}{text}")
        infos += sum(1 for m in msgs if m.get("Severity") == 1)
        if bad or errors:
            report.fail(
                f"helm lint [{name}]: {len(bad)} warning/error message(s), {len(errors)} error(s)"
            )
    report.summary(
        f"helm lint: {len(variants)} variant(s), 0 errors, 0 warnings, {infos} info message(s)"
        if not any(f.startswith("helm lint") for f in report.failures)
        else "helm lint: FAILED"
    )


async def render(
    helm, chart: Path, variants: dict[str, dict], kube_version: str, out: Path, report: Report
) -> dict[str, list[dict]]:
    rendered: dict[str, list[dict]] = {}
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
            docs = documents(text)
            rendered[name] = docs
            d = out / name
            d.mkdir(parents=True)
            for i, doc in enumerate(docs):
                fname = f"{i:02d}-{doc['kind'].lower()}-{doc['metadata']['name']}.yaml"
                (d / fname).write_text(yaml.safe_dump(doc, sort_keys=False))
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
                    if up.get("version") != 2:
                        report.fail(f"upgrade defaults -> all-on: release version {up.get('version')}")
                    else:
                        report.note("  upgrade[defaults -> all-on] ok (revision 2, pre-upgrade hook ran)")
                except Exception as e:  # noqa: BLE001
                    report.fail(f"upgrade defaults -> all-on: {e}")
    if len(rendered) == len(variants):
        report.summary(
            f"helm render: {len(variants)} variant(s) installed into a fake Kubernetes {kube_version} API, "
            f"{sum(len(v) for v in rendered.values())} documents, upgrade defaults -> all-on ok"
            if not any(f.startswith("upgrade") for f in report.failures)
            else "helm render: upgrade FAILED"
        )
    else:
        report.summary("helm render: FAILED")
    return rendered


def validate(rendered: dict[str, list[dict]], versions: list[str], report: Report) -> None:
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
                            for p in promql_problems(str(r.get("expr", ""))):
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
    ok = len(report.failures) == before
    report.summary(
        f"kubernetes-validate: {checked} documents valid (strict) against Kubernetes {' and '.join(versions)}; "
        f"{crd} prometheus-operator documents valid against the bundled CRD schemas"
        if ok
        else "kubernetes-validate: FAILED"
    )


def run_checkov(checkov: str, out: Path, report: Report) -> None:
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
    cmd = [
        checkov, "-d", str(out), "--framework", "kubernetes",
        "-o", "json", "--skip-download", "--quiet", "--compact",
    ]
    t = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - t
    try:
        data = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report.fail(f"checkov produced no JSON (exit {proc.returncode}): {proc.stderr[-2000:]}")
        report.summary("checkov: FAILED")
        return
    if isinstance(data, list):
        data = {"results": {k: sum((d.get("results", {}).get(k, []) for d in data), []) for k in
                            ("passed_checks", "failed_checks", "skipped_checks")}}
    res = data.get("results", {})
    passed = res.get("passed_checks", [])
    failed = res.get("failed_checks", [])
    skipped = res.get("skipped_checks", [])
    if not passed and not failed and not skipped:
        report.fail("checkov scanned nothing")
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
        report.note("  checkov skips (annotations in the chart):")
        for cid, rs in sorted(reasons.items()):
            for r in sorted(rs):
                report.note(f"    {cid}: {r}")
    if proc.returncode != 0 and not failed:
        report.fail(f"checkov exited {proc.returncode}: {proc.stderr[-2000:]}")
    report.summary(
        f"checkov: {len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped "
        f"(suppressed with reasons: {', '.join(sorted(reasons)) or 'none'}) in {elapsed:.0f}s"
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
        validate(rendered, versions, report)
        report.note("== checkov")
        if rendered:
            run_checkov(args.checkov, out, report)
        total = time.monotonic() - t
    finally:
        if not args.out:
            shutil.rmtree(work, ignore_errors=True)
        else:
            shutil.rmtree(work, ignore_errors=True)

    print("\nchart-check summary:")
    for line in report.lines:
        print(f"  {line}")
    if args.out:
        print(f"  rendered manifests: {out}")
    status = "FAILED" if report.failures else "passed"
    print(f"chart-check: {len(report.lines) - len([1 for l in report.lines if 'FAILED' in l])} passed, "
          f"{len([1 for l in report.lines if 'FAILED' in l]) or (1 if report.failures else 0)} failed "
          f"({status}, {len(report.failures)} problem(s), {total:.0f}s)")
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
