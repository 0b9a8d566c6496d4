#!/usr/bin/env python3
"""Summarises folded stacks (inferno-collapse-perf output): the hottest frames by self time, and the
project's own functions (merchantd::) by inclusive time, which is what motivates a change.

    fold_summary.py FILE.folded [N]
"""
import re
import sys
from collections import Counter


def short(frame, width=150):
    frame = re.sub(r"::h[0-9a-f]{16}$", "", frame)
    frame = re.sub(r"\s+", " ", frame)
    return frame if len(frame) <= width else frame[: width - 1] + "…"


# The workspace's crates: `merchantd::` (the binary) and `merchantd_<layer>::` (api, engine,
# storage, domain, ...), as symbols name them.
OURS = re.compile(r"(^|[<\s])merchantd(_[a-z]+)?::")
# A frame that is one of our functions: it starts with our path (an impl of ours, or a method).
OWN = re.compile(r"<?(impl )?merchantd(_[a-z]+)?::")


def own(frame):
    """A function of our crates (not a generic library frame instantiated with one of our types)."""
    f = frame.lstrip()
    return bool(OWN.match(f)) and not f.startswith("merchantd::main")


def main():
    path, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 25
    self_time, inclusive, ours_self, threads = Counter(), Counter(), Counter(), Counter()
    total = 0
    for line in open(path, errors="replace"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            continue
        count = int(count)
        total += count
        frames = stack.split(";")
        threads[frames[0]] += count  # inferno-collapse-perf puts the thread name first
        self_time[frames[-1]] += count
        for f in set(frames):
            if own(f):
                inclusive[f] += count
        # The innermost merchantd:: frame: where the project's code spends (or delegates) the time.
        ours = next((f for f in reversed(frames) if OURS.search(f)), None)
        if ours:
            ours_self[ours] += count
    if not total:
        print("no samples")
        return
    pct = lambda c: f"{100 * c / total:5.1f}%"
    print("by thread (merchantd = main thread: actors; actix-rt|system = HTTP worker; sqlx-sqlite-wor = SQLite):")
    for f, c in threads.most_common(8):
        print(f"  {pct(c)}  {f}")
    print("\nself time (the frame on top of the stack; identical generic code may be folded under one name):")
    for f, c in self_time.most_common(n):
        print(f"  {pct(c)}  {short(f)}")
    print("\ninnermost merchantd:: frame (own code plus the library code it calls):")
    for f, c in ours_self.most_common(n):
        print(f"  {pct(c)}  {short(f)}")
    print("\ninclusive time of merchantd:: functions (crate functions only):")
    for f, c in inclusive.most_common(n):
        print(f"  {pct(c)}  {short(f)}")


if __name__ == "__main__":
    main()
