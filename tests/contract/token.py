"""Prints an access token for the demo tenant's owner, got through the real authorization-code
flow (the load benchmark's browser and client): `python3 tests/contract/token.py PORT`."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benches", "load"))
import load  # noqa: E402

answer = load.oauth_login(int(sys.argv[1]), "demo-pos", "demo-pos-secret",
                          "owner@demo.test", "demo-owner-password")
print(answer["access_token"])
