#!/usr/bin/env python3
"""Reference implementation of merchantd's reconciliation digest (docs/digest.md).

Give it the change events a client received (from GET /events, webhooks, or the `sequence`,
`type` and `objectId` of each) and it computes what GET /digest answers for one resource:

    python3 docs/digest.py < input.json

where input.json is {"resource": "basket", "bucketSize": 10000, "events": [{"sequence": 41,
"type": "basket.completed", "objectId": 7004}, ...]}. Python 3 standard library only.
"""

import hashlib
import json
import sys


def record_hash(resource, record_id, sequence):
    """The first 4 bytes of SHA-256 of "<resource>:<id>:<sequence>", big-endian, unsigned."""
    text = f"{resource}:{record_id}:{sequence}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:4], "big")


def digest(events, resource, bucket_size=10_000):
    """The digest of `resource` over `events`: each record at its last change sequence."""
    last = {}
    for event in events:
        obj = event["type"].split(".", 1)[0]
        if obj == resource:  # stock.* events are never a resource's
            record_id = event["objectId"]
            last[record_id] = max(last.get(record_id, 0), event["sequence"])
    buckets = {}
    for record_id, sequence in last.items():
        first = record_id // bucket_size * bucket_size
        count, total = buckets.get(first, (0, 0))
        buckets[first] = (count + 1, total + record_hash(resource, record_id, sequence))

    def shown(count, total):
        return {"count": count, "hash": f"{total % 2**64:016x}"}

    return {
        "resource": resource,
        "bucketSize": bucket_size,
        "buckets": {str(first): shown(*buckets[first]) for first in sorted(buckets)},
        "total": shown(sum(c for c, _ in buckets.values()), sum(t for _, t in buckets.values())),
    }


if __name__ == "__main__":
    given = json.load(sys.stdin)
    json.dump(digest(given["events"], given["resource"], given.get("bucketSize", 10_000)), sys.stdout)
    print()
