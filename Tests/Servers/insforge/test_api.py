"""TEST-ONLY endpoints under /__test__/ (no InsForge backend has them): read the "emails"
the server sent, configure it, count requests, move its clock, expire or revoke tokens,
and play the OAuth provider. Each docstring gives the request and answer shapes.
POST /__test__/instances (an isolated instance per test) is in server.py's App.
An instance at /i/<id> has all of these under /i/<id>/__test__/."""

import json
import secrets

from auth_api import ROUTES
from core import ApiError, Response, add_query, invalid_input, iso, redirect, string_field
from state import merge_config

OPERATIONS = list(dict.fromkeys(name for _, _, name, _ in ROUTES))


def checked_config(config, changes):
    """config with changes applied (see state.CONFIG_SCHEMA); ApiError(400) when invalid."""
    merged = merge_config(config, changes)
    unknown = set(merged["forceRateLimit"]) - set(OPERATIONS)
    if unknown:
        raise invalid_input(f"forceRateLimit: unknown operations {sorted(unknown)}; "
                            f"known: {', '.join(OPERATIONS)}")
    return merged


def _body(req):
    """The JSON object body, whatever the Content-Type (tests may post with curl -d)."""
    if not req.raw_body:
        return {}
    try:
        body = json.loads(req.raw_body)
    except (ValueError, UnicodeDecodeError):
        raise invalid_input("Invalid JSON in request body")
    if not isinstance(body, dict):
        raise invalid_input("Request body must be a JSON object")
    return body


def _users(store, body):
    """The users named by body["email"], or every user when it is absent."""
    email = string_field(body, "email", required=False, fmt="email")
    if email is None:
        return list(store.users.values())
    user = store.user_by_email(email)
    if not user:
        raise ApiError(404, "NOT_FOUND", "User not found")
    return [user]


def health(store, req):
    """GET /__test__/health -> {"ok": true}"""
    return Response(200, {"ok": True})


def reset(store, req):
    """POST /__test__/reset -> {"ok": true}: forgets users, codes, tokens, counters,
    clock, and restores the startup configuration."""
    store.reset()
    return Response(200, {"ok": True})


def get_config(store, req):
    """GET /__test__/config -> the whole configuration (keys in state.CONFIG_SCHEMA)."""
    return Response(200, store.config)


def set_config(store, req):
    """POST /__test__/config {key: value, ...} -> the whole configuration after the change;
    400 on an unknown key or a bad value."""
    store.config = checked_config(store.config, _body(req))
    return Response(200, store.config)


def last_email(store, req):
    """GET /__test__/last-email?email=E[&type=T] -> the newest message sent to E, e.g.
    {"email", "type": "verify-email-code", "code": "123456", "expiresAt", "sentAt"} or
    {"email", "type": "verify-email-link", "token", "link", "redirectTo", ...};
    types: verify-email-code|verify-email-link|reset-password-code|reset-password-link|
    sign-in-code. 404 when nothing matches."""
    email = (req.query_one("email") or "").lower()
    kind = req.query_one("type")
    for message in reversed(store.outbox):
        if message["email"] == email and kind in (None, message["type"]):
            return Response(200, message)
    raise ApiError(404, "NOT_FOUND", "No email sent to this address")


def stats(store, req):
    """GET /__test__/stats -> {"refresh": n, "sessions": n, "users": n, ...}: requests per
    contract operation (every operation name listed, 0 when never called)."""
    return Response(200, {name: store.stats[name] for name in OPERATIONS})


def reset_stats(store, req):
    """POST /__test__/stats/reset -> {"ok": true}: zeroes counters and the request log."""
    store.reset_stats()
    return Response(200, {"ok": True})


def request_log(store, req):
    """GET /__test__/requests -> {"requests": [{"method", "path", "query": {name: value},
    "operation", "status", "hasAuthorization"}, ...]}, oldest first (last 500)."""
    return Response(200, {"requests": list(store.requests)})


def expire_access_tokens(store, req):
    """POST /__test__/expire-access-tokens [{"email": E}] -> {"expired": n}: every access
    token issued so far (to E) now answers 401 as an expired one would."""
    users = _users(store, _body(req))
    return Response(200, {"expired": sum(store.kill_tokens("access", u["id"]) for u in users)})


def revoke_refresh_tokens(store, req):
    """POST /__test__/revoke-refresh-tokens [{"email": E}] -> {"revoked": n}: /refresh
    answers 401 for every refresh token issued so far (to E)."""
    users = _users(store, _body(req))
    return Response(200, {"revoked": sum(store.kill_tokens("refresh", u["id"]) for u in users)})


def advance_clock(store, req):
    """POST /__test__/clock {"advanceSeconds": n} -> {"now": iso}: moves the server's clock
    forward (codes, links, tokens and the rate-limit window expire accordingly)."""
    seconds = _body(req).get("advanceSeconds")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
        raise invalid_input("advanceSeconds: Expected a non-negative number")
    store.clock_offset += seconds
    return Response(200, {"now": iso(store.now())})


def delete_user(store, req):
    """POST /__test__/delete-user {"email": E} -> {"deleted": true}: later calls with that
    user's tokens answer "User not found"."""
    body = _body(req)
    string_field(body, "email", fmt="email")
    store.delete_user(_users(store, body)[0])
    return Response(200, {"deleted": True})


def fake_provider_authorize(store, req):
    """GET /__test__/oauth/{provider}/authorize?state=...&redirect_uri=... (the authUrl
    returned by /api/auth/oauth/{provider}): the fake provider's consent page. It signs in
    config.oauthUser at once (optional query overrides: email, name, id; deny=1 to refuse)
    and redirects to the backend callback, which redirects to the app with insforge_code."""
    callback = req.query_one("redirect_uri")
    state = req.query_one("state")
    if not callback or not state:
        raise invalid_input("redirect_uri and state are required")
    error = "access_denied" if req.query_one("deny") else store.config["oauthError"]
    if error:
        return redirect(add_query(callback, {"error": error, "state": state}))
    identity = dict(store.config["oauthUser"])
    for key in ("email", "name", "id"):
        identity[key] = req.query_one(key) or identity[key]
    code = secrets.token_urlsafe(24)
    store.provider_codes[code] = identity
    return redirect(add_query(callback, {"code": code, "state": state}))


# (method, path under /__test__, handler)
TEST_ROUTES = [
    ("GET", "/health", health),
    ("POST", "/reset", reset),
    ("GET", "/config", get_config),
    ("POST", "/config", set_config),
    ("GET", "/last-email", last_email),
    ("GET", "/stats", stats),
    ("POST", "/stats/reset", reset_stats),
    ("GET", "/requests", request_log),
    ("POST", "/expire-access-tokens", expire_access_tokens),
    ("POST", "/revoke-refresh-tokens", revoke_refresh_tokens),
    ("POST", "/clock", advance_clock),
    ("POST", "/delete-user", delete_user),
    ("GET", "/oauth/{provider}/authorize", fake_provider_authorize),
]
