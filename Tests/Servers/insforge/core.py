"""Shared pieces of the InsForge test server: errors, request/response types, input
validation, timestamps and the HS256 JWT helper. Standard library only."""

import base64
import hashlib
import hmac
import json
import re
from datetime import datetime, timezone
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit


class ApiError(Exception):
    """An error answered with the contract's ErrorResponse body."""

    def __init__(self, status, code, message, next_actions=None, headers=None):
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.next_actions = next_actions
        self.headers = headers or []

    def body(self):
        body = {"error": self.code, "message": self.message, "statusCode": self.status}
        if self.next_actions:
            body["nextActions"] = self.next_actions
        return body


def invalid_input(message, next_actions=None):
    return ApiError(400, "INVALID_INPUT", message, next_actions)


class Request:
    """One parsed HTTP request. The JSON body is parsed lazily (see json_object)."""

    def __init__(self, method, path, query, headers, raw_body):
        self.method = method
        self.path = path
        self.query = query  # name -> list of values
        self.headers = headers  # case-insensitive (http.client.HTTPMessage)
        self.raw_body = raw_body
        self.params = {}  # path parameters, filled by the router

    def header(self, name):
        return self.headers.get(name)

    def query_one(self, name):
        """The single value of a query parameter, None when absent; repeated is invalid."""
        values = self.query.get(name)
        if not values:
            return None
        if len(values) > 1:
            raise invalid_input(f"{name}: expected a single value")
        return values[0]

    def bearer(self):
        auth = self.header("Authorization") or ""
        scheme, _, token = auth.partition(" ")
        return token.strip() if scheme.lower() == "bearer" and token.strip() else None

    def cookie(self, name):
        for part in (self.header("Cookie") or "").split(";"):
            key, _, value = part.strip().partition("=")
            if key == name:
                return value
        return None

    def json_object(self):
        """The body as a JSON object. Like express.json(), a body that is not declared as
        JSON is ignored (treated as {}), so a client that forgets Content-Type fails
        validation here as it would against the real backend."""
        ctype = (self.header("Content-Type") or "").split(";")[0].strip().lower()
        if not self.raw_body or not (ctype == "application/json" or ctype.endswith("+json")):
            return {}
        try:
            body = json.loads(self.raw_body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise invalid_input(f"Invalid JSON in request body: {exc}",
                                "Please ensure your request body contains valid JSON")
        if not isinstance(body, dict):
            raise invalid_input("Request body must be a JSON object")
        return body

    def form(self):
        """An application/x-www-form-urlencoded body (the Apple-style form_post callback)."""
        try:
            return dict(parse_qsl(self.raw_body.decode("utf-8"), keep_blank_values=True))
        except UnicodeDecodeError:
            raise invalid_input("Invalid form body")


class Response:
    def __init__(self, status, body=None, headers=None):
        self.status = status
        self.body = body  # JSON-serialisable, or None for an empty body
        self.headers = list(headers or [])


def redirect(location):
    return Response(302, None, [("Location", location)])


# ---- input validation (the contract's request schemas) ----------------------------

# Lenient on purpose: accepts what OpenAPI `format: email` generators produce, rejects
# strings that are plainly not addresses.
EMAIL_RE = re.compile(r"[^@\s\"(),:;<>\[\]\\]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
                      r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+")
URI_RE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[^\s]+")
UUID_RE = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
SIX_DIGITS_RE = re.compile(r"[0-9]{6}")
PKCE_RE = re.compile(r"[A-Za-z0-9\-._~]{43,128}")  # RFC 7636 verifier / S256 challenge

CLIENT_TYPES = ("web", "mobile", "desktop", "server")


def string_field(body, key, required=True, pattern=None, fmt=None, min_len=None, max_len=None):
    """body[key] as a string checked against the schema; None when optional and absent."""
    if key not in body:
        if required:
            raise invalid_input(f"{key}: Required")
        return None
    value = body[key]
    if not isinstance(value, str):
        raise invalid_input(f"{key}: Expected string")
    if min_len is not None and len(value) < min_len:
        raise invalid_input(f"{key}: Must be at least {min_len} characters")
    if max_len is not None and len(value) > max_len:
        raise invalid_input(f"{key}: Must be at most {max_len} characters")
    if pattern is not None and not pattern.fullmatch(value):
        raise invalid_input(f"{key}: Invalid format")
    if fmt == "email":
        if not EMAIL_RE.fullmatch(value):
            raise invalid_input(f"{key}: Invalid email")
        return value.lower()
    if fmt == "uri" and not URI_RE.fullmatch(value):
        raise invalid_input(f"{key}: Invalid url")
    return value


def client_type(req):
    """The `client_type` query parameter (default web); anything else is invalid input."""
    value = req.query_one("client_type")
    if value is None:
        return "web"
    if value not in CLIENT_TYPES:
        raise invalid_input(f"client_type: Expected one of {', '.join(CLIENT_TYPES)}")
    return value


def add_query(url, params):
    """url with params set in its query string, keeping the parameters it already had
    (a client may carry its own `state` in its redirect URI; it comes back untouched)."""
    parts = urlsplit(url)
    kept = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k not in params]
    return urlunsplit(parts._replace(query=urlencode(kept + list(params.items()))))


def strip_query(url):
    parts = urlsplit(url)
    return urlunsplit(parts._replace(query="", fragment=""))


# ---- time and tokens ----------------------------------------------------------------

def iso(ts):
    """RFC 3339 UTC timestamp with milliseconds, as JavaScript's toISOString()."""
    text = datetime.fromtimestamp(ts, timezone.utc).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def sha256_hex(text):
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def b64url_decode(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def pkce_s256(verifier):
    return b64url(hashlib.sha256(verifier.encode("ascii")).digest())


def jwt_encode(payload, secret):
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    body = b64url(json.dumps(payload, separators=(",", ":")).encode())
    signing_input = f"{header}.{body}".encode("ascii")
    return f"{header}.{body}.{b64url(hmac.new(secret, signing_input, hashlib.sha256).digest())}"


def jwt_decode(token, secret, now):
    """The payload of a valid, unexpired HS256 token signed with secret; None otherwise."""
    try:
        header, body, signature = token.split(".")
        expected = hmac.new(secret, f"{header}.{body}".encode("ascii"), hashlib.sha256).digest()
        if not hmac.compare_digest(b64url_decode(signature), expected):
            return None
        if json.loads(b64url_decode(header)).get("alg") != "HS256":
            return None
        payload = json.loads(b64url_decode(body))
    except (ValueError, UnicodeError, AttributeError):
        return None
    if not isinstance(payload, dict):
        return None
    exp = payload.get("exp")
    if not isinstance(exp, (int, float)) or exp <= now:
        return None
    return payload
