"""Smoke tests of the InsForge test server's main flows, end to end over HTTP.

    cd Tests/Servers/insforge && python3 -m unittest
    (or: python3 -m unittest discover -s Tests/Servers/insforge)

Starts server.py on an ephemeral port once, and resets it before each test."""

import base64
import hashlib
import http.client
import json
import os
import secrets
import subprocess
import sys
import unittest
from urllib.parse import parse_qs, urlencode, urlsplit

HERE = os.path.dirname(os.path.abspath(__file__))
PASSWORD = "first-password-1"


class Client:
    """Minimal HTTP client that never follows redirects."""

    def __init__(self, port):
        self.port = port

    def call(self, method, path, body=None, query=None, headers=None):
        if query:
            path += "?" + urlencode(query)
        hdrs = dict(headers or {})
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request(method, path, data, hdrs)
            resp = conn.getresponse()
            raw = resp.read()
            return resp.status, resp.headers, json.loads(raw) if raw else None
        finally:
            conn.close()

    def get_url(self, url, headers=None):
        parts = urlsplit(url)
        return self.call("GET", parts.path + ("?" + parts.query if parts.query else ""),
                         headers=headers)


def pkce_pair():
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
    return verifier, challenge.rstrip(b"=").decode()


def jwt_claims(token):
    body = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))


class ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "server.py"), "--port", "0"],
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = cls.proc.stdout.readline().strip()
        assert line.startswith("PORT="), line
        cls.client = Client(int(line[5:]))

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait(timeout=10)
        cls.proc.stdout.close()

    def setUp(self):
        self.assertEqual(self.control("POST", "reset")[0], 200)

    # ---- helpers ----

    def api(self, method, path, body=None, query=None, headers=None):
        return self.client.call(method, "/api/auth" + path, body, query, headers)

    def control(self, method, path, body=None, query=None):
        return self.client.call(method, "/__test__/" + path, body, query)

    def configure(self, **changes):
        status, _, body = self.control("POST", "config", changes)
        self.assertEqual(status, 200, body)

    def last_email(self, email, kind=None):
        status, _, body = self.control("GET", "last-email",
                                    query={"email": email, **({"type": kind} if kind else {})})
        self.assertEqual(status, 200, body)
        return body

    def sign_up(self, email="ann@example.com", password=PASSWORD, **extra):
        return self.api("POST", "/users", {"email": email, "password": password, **extra},
                        query={"client_type": "desktop"})

    def sign_in(self, email="ann@example.com", password=PASSWORD, client_type="desktop"):
        return self.api("POST", "/sessions", {"email": email, "password": password},
                        query={"client_type": client_type} if client_type else None)

    def assert_error(self, response, status, code=None):
        got, _, body = response
        self.assertEqual(got, status, body)
        self.assertEqual(body["statusCode"], status)
        self.assertIsInstance(body["message"], str)
        if code:
            self.assertEqual(body["error"], code)
        return body

    def assert_session(self, response):
        status, _, body = response
        self.assertEqual(status, 200, body)
        self.assertIn("refreshToken", body)
        self.assertNotIn("csrfToken", body)
        return body

    # ---- sign-up, sign-in, current user, profile ----

    def test_sign_up_without_verification_signs_in(self):
        body = self.assert_session(self.sign_up(name="Ann"))
        self.assertFalse(body["requireEmailVerification"])
        self.assertEqual(body["user"]["profile"], {"name": "Ann"})
        claims = jwt_claims(body["accessToken"])
        self.assertEqual((claims["sub"], claims["email"]), (body["user"]["id"], "ann@example.com"))
        self.assertGreater(claims["exp"], claims["iat"])
        auth = {"Authorization": "Bearer " + body["accessToken"]}
        status, _, current = self.api("GET", "/sessions/current", headers=auth)
        self.assertEqual((status, current["user"]["email"]), (200, "ann@example.com"))
        status, _, profile = self.api("PATCH", "/profiles/current",
                                      {"profile": {"avatar_url": "https://a.example/p.png"}},
                                      headers=auth)
        self.assertEqual(status, 200)
        self.assertEqual(profile["profile"], {"name": "Ann", "avatar_url": "https://a.example/p.png"})
        status, _, public = self.api("GET", "/profiles/" + body["user"]["id"])
        self.assertEqual((status, public["profile"]["avatar_url"]), (200, "https://a.example/p.png"))
        self.assert_error(self.api("GET", "/sessions/current"), 401)

    def test_sign_up_errors(self):
        self.sign_up()
        self.assert_error(self.sign_up(), 409, "AUTH_EMAIL_EXISTS")
        self.assert_error(self.sign_up("bob@example.com", "short"), 400, "INVALID_INPUT")
        self.assert_error(self.sign_up("not-an-email"), 400)
        self.configure(disableSignup=True)
        self.assert_error(self.sign_up("bob@example.com"), 403, "AUTH_SIGNUP_DISABLED")

    def test_sign_in_errors_and_rate_limit(self):
        self.sign_up()
        self.assert_error(self.sign_in(password="wrong-password"), 401, "AUTH_UNAUTHORIZED")
        self.assert_error(self.sign_in("nobody@example.com"), 401)
        self.configure(signInFailureLimit=3)
        self.sign_in(password="wrong-password")
        status, headers, _ = self.sign_in()  # 3 failures so far: now limited
        self.assertEqual(status, 429)
        self.assertGreater(int(headers["Retry-After"]), 0)
        self.control("POST", "clock", {"advanceSeconds": 15 * 60})
        self.assert_session(self.sign_in())

    def test_forced_rate_limit_and_delivery_failure(self):
        self.configure(forceRateLimit=["refresh"])
        self.assert_error(self.api("POST", "/refresh", {"refreshToken": "x"},
                                   query={"client_type": "desktop"}), 429, "TOO_MANY_REQUESTS")
        self.configure(requireEmailVerification=True, emailDeliveryFailure=429)
        body = self.assert_error(self.sign_up(), 429, "AUTH_VERIFICATION_EMAIL_DELIVERY_FAILED")
        self.assertIn("send-verification", body["nextActions"])
        self.assert_error(self.sign_up(), 409)  # the account exists

    # ---- email verification ----

    def test_verification_by_code(self):
        self.configure(requireEmailVerification=True)
        status, _, body = self.sign_up()
        self.assertEqual(status, 200)
        self.assertTrue(body["requireEmailVerification"])
        self.assertIsNone(body["accessToken"])
        self.assertIn("user", body)  # spec mode (README note 5)
        body = self.assert_error(self.sign_in(), 403, "FORBIDDEN")
        self.assertEqual(body["message"], "Email verification required")
        self.assertIn("verify", body["nextActions"])
        first = self.last_email("ann@example.com", "verify-email-code")["code"]
        status, _, _ = self.api("POST", "/email/send-verification", {"email": "ann@example.com"})
        self.assertEqual(status, 202)
        code = self.last_email("ann@example.com")["code"]
        wrong = first if first != code else f"{(int(code) + 1) % 10 ** 6:06d}"
        verify = lambda otp: self.api("POST", "/email/verify",  # noqa: E731
                                      {"email": "ann@example.com", "otp": otp},
                                      query={"client_type": "desktop"})
        self.assert_error(verify(wrong), 401)  # a resend replaces the earlier code
        body = self.assert_session(verify(code))
        self.assertTrue(body["user"]["emailVerified"])
        self.assert_error(verify(code), 401)  # used
        self.assert_session(self.sign_in())

    def test_backend_mode_differences(self):
        self.configure(requireEmailVerification=True, mode="backend")
        status, _, body = self.sign_up()
        self.assertEqual((status, body), (200, {"accessToken": None,
                                                "requireEmailVerification": True}))
        self.assert_error(self.api("POST", "/email/verify",
                                   {"email": "ann@example.com", "otp": "000000"}), 400)
        self.assert_error(self.api("POST", "/refresh", {}, query={"client_type": "server"}), 400)
        _, challenge = pkce_pair()
        status, _, _ = self.api("GET", "/oauth/tiktok", query={
            "redirect_uri": "http://127.0.0.1:1/cb", "code_challenge": challenge})
        self.assertEqual(status, 501)

    def test_verification_by_link(self):
        self.configure(requireEmailVerification=True, verifyEmailMethod="link")
        self.assert_error(self.sign_up(), 400)  # redirectTo is required for links
        status, _, _ = self.sign_up(redirectTo="http://127.0.0.1:9/signed-in?app=1")
        self.assertEqual(status, 200)
        mail = self.last_email("ann@example.com", "verify-email-link")
        status, headers, _ = self.client.get_url(mail["link"])
        self.assertEqual(status, 302)
        target = urlsplit(headers["Location"])
        self.assertEqual(target.path, "/signed-in")
        self.assertEqual(parse_qs(target.query), {"app": ["1"], "insforge_type": ["verify_email"],
                                                  "insforge_status": ["success"]})
        status, headers, _ = self.client.get_url(mail["link"])  # used: error redirect
        self.assertEqual(parse_qs(urlsplit(headers["Location"]).query)["insforge_status"], ["error"])
        self.assert_session(self.sign_in())
        self.assert_error(self.api("GET", "/email/verify-link", query={"token": "nope"}), 400)

    # ---- refresh and tokens ----

    def test_refresh(self):
        session = self.assert_session(self.sign_up())
        refresh = lambda token: self.api("POST", "/refresh", {"refreshToken": token},  # noqa: E731
                                         query={"client_type": "desktop"})
        renewed = self.assert_session(refresh(session["refreshToken"]))
        self.assertNotEqual(renewed["accessToken"], session["accessToken"])
        self.assertNotEqual(renewed["refreshToken"], session["refreshToken"])
        self.assert_session(refresh(session["refreshToken"]))  # old one still valid (note 8)
        self.assert_error(refresh("garbage"), 401)
        self.assert_error(refresh(session["accessToken"]), 401)
        self.assert_error(self.api("POST", "/refresh", {}, query={"client_type": "desktop"}), 401)
        stats = self.control("GET", "stats")[2]
        self.assertEqual((stats["refresh"], stats["users"]), (5, 1))

        auth = {"Authorization": "Bearer " + renewed["accessToken"]}
        self.assertEqual(self.api("GET", "/sessions/current", headers=auth)[0], 200)
        self.assertEqual(self.control("POST", "expire-access-tokens", {})[2]["expired"], 3)
        self.assert_error(self.api("GET", "/sessions/current", headers=auth), 401)
        self.configure(accessTokenTtlSeconds=60)
        fresh = self.assert_session(refresh(renewed["refreshToken"]))
        auth = {"Authorization": "Bearer " + fresh["accessToken"]}
        self.assertEqual(self.api("GET", "/sessions/current", headers=auth)[0], 200)
        self.control("POST", "clock", {"advanceSeconds": 61})
        self.assert_error(self.api("GET", "/sessions/current", headers=auth), 401)
        self.control("POST", "revoke-refresh-tokens", {"email": "ann@example.com"})
        self.assert_error(refresh(fresh["refreshToken"]), 401)

    def test_web_client_cookie_and_csrf(self):
        self.sign_up()
        status, headers, body = self.sign_in(client_type=None)
        self.assertEqual(status, 200)
        self.assertNotIn("refreshToken", body)
        cookie = headers["Set-Cookie"].split(";")[0]
        ok = self.api("POST", "/refresh", headers={"Cookie": cookie,
                                                   "X-CSRF-Token": body["csrfToken"]})
        self.assertEqual(ok[0], 200)
        self.assert_error(self.api("POST", "/refresh", headers={"Cookie": cookie,
                                                                "X-CSRF-Token": "bad"}), 403)
        self.assertEqual(self.api("POST", "/logout", query={"client_type": "desktop"})[0], 200)

    def test_deleted_user(self):
        session = self.assert_session(self.sign_up())
        self.control("POST", "delete-user", {"email": "ann@example.com"})
        self.assertEqual(self.api("GET", "/sessions/current", headers={
            "Authorization": "Bearer " + session["accessToken"]})[2]["error"], "AUTH_USER_NOT_FOUND")

    # ---- password reset ----

    def test_password_reset_by_code(self):
        self.sign_up()
        status, _, _ = self.api("POST", "/email/send-reset-password", {"email": "ann@example.com"})
        self.assertEqual(status, 202)
        self.assertEqual(self.api("POST", "/email/send-reset-password",
                                  {"email": "nobody@example.com"})[0], 202)  # no enumeration
        code = self.last_email("ann@example.com", "reset-password-code")["code"]
        exchange = lambda: self.api("POST", "/email/exchange-reset-password-token",  # noqa: E731
                                    {"email": "ann@example.com", "code": code})
        status, _, body = exchange()
        self.assertEqual(status, 200, body)
        self.assertTrue(body["expiresAt"].endswith("Z"))
        self.assert_error(exchange(), 401)  # consumed
        reset = lambda password: self.api("POST", "/email/reset-password",  # noqa: E731
                                          {"newPassword": password, "otp": body["token"]})
        self.assert_error(reset("tiny"), 400)  # policy first; the token stays usable
        self.assertEqual(reset("second-password-2")[0], 200)
        self.assert_error(reset("third-password-3"), 401)
        self.assert_error(self.sign_in(), 401)
        self.assert_session(self.sign_in(password="second-password-2"))

    def test_reset_code_expires(self):
        self.sign_up()
        self.api("POST", "/email/send-reset-password", {"email": "ann@example.com"})
        code = self.last_email("ann@example.com")["code"]
        self.control("POST", "clock", {"advanceSeconds": 15 * 60 + 1})
        self.assert_error(self.api("POST", "/email/exchange-reset-password-token",
                                   {"email": "ann@example.com", "code": code}), 401)

    def test_password_reset_by_link(self):
        self.configure(resetPasswordMethod="link")
        self.sign_up()
        self.assert_error(self.api("POST", "/email/send-reset-password",
                                   {"email": "ann@example.com"}), 400)
        self.api("POST", "/email/send-reset-password",
                 {"email": "ann@example.com", "redirectTo": "myapp://reset"})
        mail = self.last_email("ann@example.com", "reset-password-link")
        status, headers, _ = self.client.get_url(mail["link"])
        self.assertEqual(status, 302)
        query = parse_qs(urlsplit(headers["Location"]).query)
        self.assertEqual(query["insforge_status"], ["ready"])
        self.assertEqual(self.api("POST", "/email/reset-password", {
            "newPassword": "second-password-2", "otp": query["token"][0]})[0], 200)
        self.assert_session(self.sign_in(password="second-password-2"))

    # ---- OAuth with PKCE ----

    def oauth_redirect(self, challenge, redirect_uri="http://127.0.0.1:9/callback?state=app-1"):
        """Runs init, the fake provider and the callback; returns the app redirect's query."""
        status, _, body = self.api("GET", "/oauth/github", query={
            "redirect_uri": redirect_uri, "code_challenge": challenge})
        self.assertEqual(status, 200, body)
        status, headers, _ = self.client.get_url(body["authUrl"])  # the fake provider page
        self.assertEqual(status, 302)
        status, headers, _ = self.client.get_url(headers["Location"])  # backend callback
        self.assertEqual(status, 302)
        target = urlsplit(headers["Location"])
        self.assertEqual(target.path, "/callback")
        return {k: v[0] for k, v in parse_qs(target.query).items()}

    def test_oauth_pkce(self):
        verifier, challenge = pkce_pair()
        self.assert_error(self.api("GET", "/oauth/github", query={
            "redirect_uri": "http://127.0.0.1:9/callback"}), 400)  # note 3
        self.assert_error(self.api("GET", "/oauth/myspace", query={
            "redirect_uri": "http://127.0.0.1:9/callback", "code_challenge": challenge}), 400)
        exchange = lambda code, v: self.api("POST", "/oauth/exchange",  # noqa: E731
                                            {"code": code, "code_verifier": v},
                                            query={"client_type": "desktop"})
        query = self.oauth_redirect(challenge)
        self.assertEqual(query["state"], "app-1")  # the app's own parameter is kept
        self.assert_error(exchange(query["insforge_code"], pkce_pair()[0]), 401)
        self.assert_error(exchange(query["insforge_code"], verifier), 401)  # one-time
        query = self.oauth_redirect(challenge)
        body = self.assert_session(exchange(query["insforge_code"], verifier))
        self.assertEqual(body["user"]["email"], "oauth.user@example.com")
        self.assertEqual(body["user"]["providers"], ["github"])
        self.assertTrue(body["user"]["emailVerified"])

    # ---- isolated instances ----

    def test_instances_are_isolated(self):
        status, _, one = self.client.call("POST", "/__test__/instances",
                                          {"requireEmailVerification": True})
        self.assertEqual(status, 200, one)
        two = self.client.call("POST", "/__test__/instances")[2]
        base = urlsplit(one["url"]).path
        self.assertTrue(base.startswith("/i/"))
        self.sign_up()  # root instance: no verification needed
        status, _, body = self.client.call("POST", base + "/api/auth/users",
                                           {"email": "ann@example.com", "password": PASSWORD},
                                           {"client_type": "desktop"})
        self.assertEqual((status, body["requireEmailVerification"]), (200, True))
        self.assertEqual(self.client.call("GET", base + "/__test__/last-email",
                                          query={"email": "ann@example.com"})[0], 200)
        status, _, stats = self.client.call("GET", urlsplit(two["url"]).path + "/__test__/stats")
        self.assertEqual((status, stats["users"]), (200, 0))
        self.assertEqual(self.client.call("GET", "/i/0000000000000000/api/auth/public-config")[0],
                         404)
        self.client.call("POST", base + "/__test__/config", {"resetPasswordMethod": "link"})
        self.client.call("POST", base + "/api/auth/email/send-reset-password",
                         {"email": "ann@example.com", "redirectTo": "myapp://reset"})
        link = self.client.call("GET", base + "/__test__/last-email",
                                query={"email": "ann@example.com"})[2]["link"]
        self.assertTrue(link.startswith(one["url"] + "/api/auth/"))
        self.assertEqual(self.client.get_url(link)[0], 302)

    def test_oauth_denied_and_bad_state(self):
        _, challenge = pkce_pair()
        self.configure(oauthError="access_denied")
        self.assertEqual(self.oauth_redirect(challenge)["error"], "access_denied")
        self.assert_error(self.api("GET", "/oauth/github/callback",
                                   query={"code": "x", "state": "forged"}), 400)  # note 9
        self.configure(allowedRedirectUrls=["myapp://auth"])
        self.assert_error(self.api("GET", "/oauth/github", query={
            "redirect_uri": "http://127.0.0.1:9/callback", "code_challenge": challenge}), 400)


if __name__ == "__main__":
    unittest.main()
