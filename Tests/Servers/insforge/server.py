#!/usr/bin/env python3
"""A local stand-in for the InsForge auth backend, for end-to-end tests of the
InsForge-compatible client. It implements the client-facing part of the contract in
openapi.yaml (base path /api/auth) plus TEST-ONLY endpoints under /__test__/
(see test_api.py and README.md). Python 3 standard library only; in-memory state; binds
127.0.0.1 only. POST /__test__/instances gives each test its own isolated instance at
/i/<id> (own users, config, counters, clock), so tests may run in parallel.

    python3 server.py --port 0 [--config '{"requireEmailVerification": true}']

prints `PORT=<n>` as its first stdout line, then logs `METHOD /path STATUS` per request
on stderr (never query strings, bodies or headers: they carry codes and tokens).

Implemented: public-config, POST /users (sign-up), GET /profiles/{userId},
PATCH /profiles/current, POST /sessions (password and email OTP), GET /sessions/current,
/refresh, /logout, /email/send-otp, /email/send-verification, /email/verify,
/email/verify-link, /email/send-reset-password, /email/exchange-reset-password-token,
/email/reset-password-link, /email/reset-password, /oauth/{provider},
/oauth/{provider}/callback (GET and POST), /oauth/exchange. Not implemented (404): the
admin endpoints, custom OAuth providers, /id-token, /oauth/shared/callback.

Where the spec and the backend differ (specs/README.md, notes 1-9), the server does:
1. Wrong/expired code or token on /oauth/exchange, /email/exchange-reset-password-token,
   /email/reset-password, /email/verify: config "mode" picks it. "spec" (default): 401;
   "backend": 400. Malformed input is 400 in both.
2. /refresh without a token (non-web client): "spec": 401, "backend": 400.
3. code_challenge on /oauth/{provider}: always required (backend); 400 when absent.
4. instagram/tiktok/spotify: "spec": work like the others; "backend": 501.
5. Sign-up needing verification: "spec": {user, accessToken: null, csrfToken: null,
   refreshToken: null, requireEmailVerification: true}; "backend":
   {accessToken: null, requireEmailVerification: true}.
6. POST /users: no auth by default (spec); with config "anonKey" set, it must come as a
   Bearer token or the answer is 401 (backend).
7. Lifetimes as the backend: codes 15 min, link tokens and reset tokens 24 h, sign-in
   OTP 5 min (plus: insforge_code 5 min, OAuth state 1 h, refresh token 7 days, access
   token "accessTokenTtlSeconds", default 15 min). POST /__test__/clock moves time.
8. /refresh issues a new access and refresh token; older refresh tokens stay valid
   (backend), until they expire or POST /__test__/revoke-refresh-tokens.
9. OAuth callbacks answer 400 on a missing or bad state (backend).
Other choices: invalid `client_type` is 400 (except /refresh, see 2, and /logout, which
documents no 400 and treats it as web); a redirect URI handed to the app keeps its own
query parameters (a client can carry its `state` there), as the backend's URL.set does;
the PKCE callback adds only insforge_code (backend), not user_id/email/name (spec text).
Rate limiting: after config "signInFailureLimit" (default 10, as the backend) failed
POST /sessions within 15 minutes, /sessions answers 429 (with Retry-After); any operation
listed in config "forceRateLimit" answers 429 at once. The backend's other limits (per
email resend cooldown, verify attempts) are not applied: the spec documents no 429 there.
"""

import argparse
import json
import re
import secrets
import signal
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

from auth_api import ROUTES
from core import ApiError, Request, Response
from state import Store, default_config
from test_api import TEST_ROUTES, checked_config

MAX_BODY = 1 << 20


class Router:
    """Matches METHOD + path against patterns whose {name} segments are parameters."""

    def __init__(self):
        self.routes = []  # (method, segments, name, handler)

    def add(self, method, pattern, name, handler):
        self.routes.append((method, pattern.strip("/").split("/"), name, handler))

    def match(self, method, path):
        segments = path.strip("/").split("/")
        for route_method, pattern, name, handler in self.routes:
            if route_method != method or len(pattern) != len(segments):
                continue
            params = {}
            for want, got in zip(pattern, segments):
                if want.startswith("{"):
                    if not got:
                        break
                    params[want[1:-1]] = unquote(got)
                elif want != got:
                    break
            else:
                return name, handler, params
        return None, None, None


INSTANCE_RE = re.compile(r"/i/([0-9a-f]{16})(/.*)")


class App:
    def __init__(self, store):
        self.store = store  # the root instance
        self.instances = {}  # id -> Store
        self.instances_lock = threading.Lock()
        self.router = Router()
        for method, path, name, handler in ROUTES:
            self.router.add(method, "/api/auth" + path, name, handler)
        for method, path, handler in TEST_ROUTES:
            self.router.add(method, "/__test__" + path, None, handler)

    def handle(self, req):
        if (req.method, req.path) == ("POST", "/__test__/instances"):
            return self._new_instance(req)
        store = self.store
        match = INSTANCE_RE.fullmatch(req.path)
        if match:
            store = self.instances.get(match[1])
            if store is None:
                return self._error(ApiError(404, "NOT_FOUND", "No such test server instance"))
            req.path = match[2]
        with store.lock:
            name, handler, params = self.router.match(req.method, req.path)
            if handler is None:
                resp = self._error(ApiError(404, "NOT_FOUND", f"Cannot {req.method} {req.path}"))
            elif name is None:  # a /__test__/ endpoint: not counted, not logged
                req.params = params
                resp = self._call(store, handler, req)
            else:
                req.params = params
                resp = self._contract_call(store, name, handler, req)
                store.requests.append({
                    "method": req.method, "path": req.path, "operation": name,
                    "query": {k: v[0] for k, v in req.query.items()},
                    "status": resp.status, "hasAuthorization": bool(req.header("Authorization")),
                })
            return resp

    def _new_instance(self, req):
        """TEST-ONLY. POST /__test__/instances [{config changes}] -> {"url", "id"}: a new
        isolated instance (startup config plus the changes) at <url> = origin/i/<id>."""
        try:
            config = checked_config(self.store.startup_config, json.loads(req.raw_body or b"{}"))
        except ValueError:
            return self._error(ApiError(400, "INVALID_INPUT", "Invalid JSON in request body"))
        except ApiError as err:
            return self._error(err)
        instance_id = secrets.token_hex(8)
        origin = self.store.base_url
        with self.instances_lock:
            self.instances[instance_id] = Store(config, origin, f"/i/{instance_id}")
        return Response(200, {"id": instance_id, "url": f"{origin}/i/{instance_id}"})

    def _contract_call(self, store, name, handler, req):
        store.stats[name] += 1
        if name in store.config["forceRateLimit"]:
            return self._error(_too_many("Too many requests (forced by the test server).", 60))
        if name == "sessions":
            retry_after = store.sign_in_retry_after()
            if retry_after:
                return self._error(_too_many("Too many sign-in attempts from this IP. Please "
                                             "try again in 15 minutes.", retry_after))
        resp = self._call(store, handler, req)
        if name == "sessions" and resp.status >= 400:
            store.sign_in_failures.append(store.now())
        return resp

    @staticmethod
    def _call(store, handler, req):
        try:
            return handler(store, req)
        except ApiError as err:
            return App._error(err)

    @staticmethod
    def _error(err):
        return Response(err.status, err.body(), err.headers)


def _too_many(message, retry_after):
    return ApiError(429, "TOO_MANY_REQUESTS", message, headers=[("Retry-After", str(retry_after))])


class Server(ThreadingHTTPServer):
    # Parallel tests open many connections at once; the default accept backlog (5) overflows
    # and clients see "connection lost".
    request_queue_size = 128


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as URLSession expects
    timeout = 120  # seconds an idle keep-alive connection (and its thread) may linger
    server_version = "InsForgeTestServer/1.0"

    def _serve(self):
        try:
            parts = urlsplit(self.path)
            req = Request(self.command, parts.path, parse_qs(parts.query, keep_blank_values=True),
                          self.headers, self._read_body())
            resp = self.server.app.handle(req)
        except ApiError as err:  # unreadable body
            resp = App._error(err)
            self.close_connection = True
        except Exception:  # a bug: answer 500, keep serving
            traceback.print_exc(file=sys.stderr)
            resp = App._error(ApiError(500, "INTERNAL_ERROR", "Internal server error"))
        self._send(resp)
        # Path only: query strings carry link tokens and PKCE values.
        sys.stderr.write(f"{self.command} {urlsplit(self.path).path} {resp.status}\n")

    def __getattr__(self, name):
        # Every method (TRACE, PROPFIND, ...) goes to the router, which answers 404 to the
        # ones no route has, as express does, instead of http.server's HTML 501.
        if name.startswith("do_"):
            return self._serve
        raise AttributeError(name)

    def _read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                try:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                except ValueError:
                    raise ApiError(400, "INVALID_INPUT", "Invalid chunked body")
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
                if sum(map(len, chunks)) > MAX_BODY:
                    raise ApiError(413, "PAYLOAD_TOO_LARGE", "Request body too large")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise ApiError(400, "INVALID_INPUT", "Invalid Content-Length")
        if length < 0 or length > MAX_BODY:
            raise ApiError(413, "PAYLOAD_TOO_LARGE", "Request body too large")
        return self.rfile.read(length) if length else b""

    def _send(self, resp):
        data = b"" if resp.body is None else json.dumps(resp.body).encode("utf-8")
        self.send_response(resp.status)
        for name, value in resp.headers:
            self.send_header(name, value)
        if resp.body is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def log_message(self, *args):
        pass  # _serve logs a redacted line instead


def main(argv=None):
    parser = argparse.ArgumentParser(description="InsForge auth test server (127.0.0.1 only)")
    parser.add_argument("--port", type=int, default=0, help="TCP port, 0 = ephemeral")
    parser.add_argument("--config", default="{}",
                        help="JSON object of startup config (keys: see state.CONFIG_SCHEMA)")
    args = parser.parse_args(argv)
    try:
        config = checked_config(default_config(), json.loads(args.config))
    except (ValueError, ApiError) as err:
        parser.error(f"--config: {err}")

    httpd = Server(("127.0.0.1", args.port), Handler)
    httpd.daemon_threads = True
    httpd.block_on_close = False  # exit at once, even with keep-alive connections open
    port = httpd.server_address[1]
    httpd.app = App(Store(config, f"http://127.0.0.1:{port}"))
    print(f"PORT={port}", flush=True)

    def stop(*_):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


if __name__ == "__main__":
    main()
