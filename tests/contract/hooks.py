"""Schemathesis hooks for merchantd: one check of ours beside the built-in ones."""
import schemathesis

# A merchant's archive (POST /operator/merchant/import) is newline-delimited JSON, described as
# a string: sent as the text it is.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")


@schemathesis.check
def carries_the_envelope(ctx, response, case):
    """Every JSON answer carries `api` (codeBaseVersion, message); every error a top-level `error`.

    The document itself (/openapi.json) is the one JSON answer that is not an API answer."""
    content_type = response.headers.get("content-type", [""])
    content_type = content_type[0] if isinstance(content_type, list) else content_type
    if not content_type.startswith("application/json") or case.path == "/openapi.json" \
            or case.method == "HEAD" or not response.content:
        return None
    body = response.json()
    api = body.get("api") if isinstance(body, dict) else None
    if not isinstance(api, dict) or api.get("codeBaseVersion") != "2.0" \
            or not isinstance(api.get("message"), dict):
        raise AssertionError(f"no `api` envelope in {response.text[:300]}")
    if response.status_code >= 400 and "error" not in body:
        raise AssertionError(f"a {response.status_code} without `error`: {response.text[:300]}")
    return None
