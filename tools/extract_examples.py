#!/usr/bin/env python3
"""Extracts the worked exchanges of ../shared/examples.md whose bodies are complete JSON into
src/openapi/src/examples.json, which the OpenAPI document attaches to its operations.

    python3 tools/extract_examples.py ../shared/examples.md > src/openapi/src/examples.json

Blocks with elisions (`…`) are skipped: an example in the contract must be a real body."""
import json
import re
import sys

REQUEST = re.compile(r"^(GET|POST|PUT|DELETE|HEAD) (\S+) HTTP/1\.1$")
RESPONSE = re.compile(r"^HTTP/1\.1 (\d{3})")


def body(lines):
    text = "\n".join(lines).strip()
    if not text or "…" in text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def exchanges(markdown):
    section = ""
    for block in re.split(r"^```", markdown, flags=re.M)[1::2]:
        if not block.startswith("http\n"):
            continue
        lines = block[5:].splitlines()
        first = REQUEST.match(lines[0]) if lines else None
        at = 0
        request = None
        if first:
            at = lines.index("") if "" in lines else len(lines)
            end = next((i for i in range(at, len(lines)) if RESPONSE.match(lines[i])), len(lines))
            request = body(lines[at:end])
            at = end
        if at >= len(lines) or not RESPONSE.match(lines[at]):
            continue
        status = int(RESPONSE.match(lines[at]).group(1))
        rest = lines[at:]
        blank = rest.index("") if "" in rest else len(rest)
        yield {
            "method": first.group(1) if first else None,
            "path": first.group(2).split("?")[0] if first else None,
            "status": status,
            "request": request,
            "response": body(rest[blank:]),
        }


def main():
    markdown = open(sys.argv[1], encoding="utf-8").read()
    found = [e for e in exchanges(markdown) if e["method"] and (e["request"] or e["response"])]
    json.dump(found, sys.stdout, indent=1, ensure_ascii=False)
    sys.stdout.write("\n")


main()
