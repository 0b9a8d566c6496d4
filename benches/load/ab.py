#!/usr/bin/env python3
"""Two merchantd binaries measured in one run, alternately, with the load benchmark's own
scenarios: before, after, before, after, ... so that the machine's drift falls on both.

    benches/load/ab.py BEFORE AFTER [--rounds 3] [--only read,write,calculate,sync]
                       [--postgres URL] [--duration S]

Each round runs load.py (through run.sh) once per binary (`--runs 1`, the same arguments otherwise), then the
medians over the rounds are printed per scenario with after / before. A ratio within the
rounds' own spread is noise; the spread is printed beside it. Raw results stay under
target/load/ab-<time>/.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# What each scenario's figure is, as load.py records it: a rate, higher is better.
FIGURES = {
    "read": ("rps", "GET /product, 10 ids, rps"),
    "write": ("rps", "PUT /category, rps"),
    "calculate": ("rps", "POST /basket/calculate, rps"),
    "sync": ("sales_per_s", "POST /basket/sync, sales/s"),
    "ceiling": ("rps", "GET /health/live, rps"),
}


def run(binary, args, out):
    # Through run.sh, which installs wrk when it is missing and passes the rest to load.py.
    command = [os.path.join(HERE, "run.sh"), "--binary", binary, "--runs", "1",
               "--out", out, "--only", args.only]
    if args.postgres:
        command += ["--postgres", args.postgres]
    if args.duration:
        command += ["--duration", str(args.duration)]
    before = set(os.listdir(out)) if os.path.isdir(out) else set()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    made = sorted(set(os.listdir(out)) - before)
    with open(os.path.join(out, made[-1])) as f:
        return json.load(f)["results"]


def figure(results, scenario):
    key, _ = FIGURES[scenario]
    runs = results.get(scenario) or []
    values = [r[key] for r in runs if isinstance(r, dict) and r.get(key) is not None]
    return statistics.median(values) if values else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default="read,write,calculate,sync")
    ap.add_argument("--postgres")
    ap.add_argument("--duration", type=int)
    args = ap.parse_args()
    out = os.path.join(REPO, "target", "load", "ab-" + time.strftime("%Y%m%dT%H%M%S"))
    os.makedirs(out, exist_ok=True)
    scenarios = [s for s in args.only.split(",") if s in FIGURES]
    seen = {"before": {s: [] for s in scenarios}, "after": {s: [] for s in scenarios}}
    for i in range(args.rounds):
        for which, binary in (("before", args.before), ("after", args.after)):
            print(f"round {i + 1}/{args.rounds}: {which}", file=sys.stderr, flush=True)
            results = run(binary, args, os.path.join(out, which))
            for s in scenarios:
                value = figure(results, s)
                if value is not None:
                    seen[which][s].append(value)
    backend = "PostgreSQL" if args.postgres else "SQLite"
    print(f"| scenario ({backend}, {args.rounds} rounds alternated) | before (median) | after (median) "
          f"| after / before | spread of the rounds (before; after) |")
    print("|---|---|---|---|---|")
    summary = {}
    for s in scenarios:
        b, a = seen["before"][s], seen["after"][s]
        if not b or not a:
            continue
        mb, ma = statistics.median(b), statistics.median(a)
        spread = lambda v: f"{min(v):,.0f}–{max(v):,.0f}"
        print(f"| {FIGURES[s][1]} | {mb:,.0f} | {ma:,.0f} | {ma / mb:.3f} | {spread(b)}; {spread(a)} |")
        summary[s] = {"before": b, "after": a, "ratio": ma / mb}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump({"command": " ".join(sys.argv), "backend": backend, "figures": summary}, f, indent=1)


if __name__ == "__main__":
    main()
