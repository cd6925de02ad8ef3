"""The contract's endpoints under /api/auth (Tests/Servers/insforge/openapi.yaml).

Each handler takes (store, req) and returns a core.Response or raises core.ApiError.
The store's lock is held by the caller. Error codes and messages follow the backend."""

import re
import secrets

from core import (PKCE_RE, SIX_DIGITS_RE, UUID_RE, ApiError, Response, add_query,
                  client_type, invalid_input, iso, pkce_s256, redirect, string_field,
                  strip_query)
from state import (CODE_TTL, LINK_TTL, PKCE_CODE_TTL, PROVIDERS, SIGN_IN_OTP_TTL,
                   UNIMPLEMENTED_PROVIDERS)

REFRESH_COOKIE = "insforge_refresh_token"
VERIFY_EMAIL, RESET_PASSWORD, SIGN_IN = "VERIFY_EMAIL", "RESET_PASSWORD", "SIGN_IN"


# ---- helpers ------------------------------------------------------------------------

def spec_mode(store):
    return store.config["mode"] == "spec"


def invalid_secret(store, message):
    """A wrong, expired or used code/token (README note 1): spec 401, backend 400."""
    if spec_mode(store):
        return ApiError(401, "AUTH_UNAUTHORIZED", message)
    return ApiError(400, "INVALID_INPUT", message)


def check_password_policy(config, password):
    rules = [(config["requireNumber"], r"\d", "one number"),
             (config["requireLowercase"], r"[a-z]", "one lowercase letter"),
             (config["requireUppercase"], r"[A-Z]", "one uppercase letter"),
             (config["requireSpecialChar"], r"[^A-Za-z0-9]", "one special character")]
    failed = len(password) < config["passwordMinLength"] or any(
        on and not re.search(rx, password) for on, rx, _ in rules)
    if failed:
        musts = [f"at least {config['passwordMinLength']} characters"] + \
            [f"at least {what}" for on, _, what in rules if on]
        raise invalid_input("Password must contain " + ", ".join(musts))


def check_redirect(store, url):
    allowed = store.config["allowedRedirectUrls"]
    if allowed and strip_query(url) not in {strip_query(a) for a in allowed}:
        raise ApiError(400, "INVALID_INPUT", f"{url} is not in the allowed redirect URLs",
                       "Please add this URL to the allowed redirect URLs in the "
                       "authentication configuration.")
    return url


def link_redirect(store, body, method):
    """redirectTo, required and allow-listed when the emailed item is a link."""
    redirect_to = string_field(body, "redirectTo", required=False, fmt="uri")
    if method != "link":
        return redirect_to
    if redirect_to is None:
        raise invalid_input("redirectTo is required when link-based email verification "
                            "or password reset is enabled")
    return check_redirect(store, redirect_to)


def authenticate(store, req):
    token = req.bearer()
    if not token:
        raise ApiError(401, "AUTH_UNAUTHORIZED", "No token provided")
    payload = store.verify_token(token, "access")
    if not payload:
        raise ApiError(401, "AUTH_UNAUTHORIZED", "Invalid token")
    user = store.users.get(payload["sub"])
    if not user:
        raise ApiError(401, "AUTH_USER_NOT_FOUND", "User not found")
    return user


def session_response(store, user, ctype, extra=None):
    """200 with user and a new access token; the refresh token goes in the body for
    mobile/desktop/server clients, in an httpOnly cookie (plus csrfToken) for web."""
    refresh = store.issue_refresh_token(user)
    body = {"user": store.user_view(user), "accessToken": store.issue_access_token(user)}
    headers = []
    if ctype == "web":
        body["csrfToken"] = store.csrf_token(refresh)
        headers.append(("Set-Cookie", f"{REFRESH_COOKIE}={refresh}; "
                        f"Path={store.base_path}/api/auth; HttpOnly; SameSite=Lax; "
                        f"Max-Age={store.config['refreshTokenTtlSeconds']}"))
    else:
        body["refreshToken"] = refresh
    body.update(extra or {})
    return Response(200, body, headers)


def send_verification(store, email, redirect_to):
    if store.config["verifyEmailMethod"] == "link":
        token, expires = store.issue_otp(email, VERIFY_EMAIL, "token", LINK_TTL, redirect_to)
        link = f"{store.base_url}/api/auth/email/verify-link?token={token}"
        store.send_email(email, "verify-email-link", token=token, link=link,
                         redirectTo=redirect_to, expiresAt=iso(expires))
    else:
        code, expires = store.issue_otp(email, VERIFY_EMAIL, "code", CODE_TTL)
        store.send_email(email, "verify-email-code", code=code, expiresAt=iso(expires))


# ---- configuration and users ----------------------------------------------------------

def public_config(store, req):
    cfg = store.config
    providers = [p for p in PROVIDERS
                 if spec_mode(store) or p not in UNIMPLEMENTED_PROVIDERS]
    keys = ("requireEmailVerification", "passwordMinLength", "requireNumber",
            "requireLowercase", "requireUppercase", "requireSpecialChar",
            "verifyEmailMethod", "resetPasswordMethod", "disableSignup")
    return Response(200, {"oAuthProviders": providers, "customOAuthProviders": [],
                          **{k: cfg[k] for k in keys}})


def sign_up(store, req):
    cfg = store.config
    ctype = client_type(req)
    if cfg["anonKey"] and req.bearer() != cfg["anonKey"]:  # README note 6, backend side
        raise ApiError(401, "AUTH_UNAUTHORIZED", "Invalid or missing anon key",
                       "Send the project's anon key as a Bearer token")
    body = req.json_object()
    email = string_field(body, "email", fmt="email")
    password = string_field(body, "password")
    name = string_field(body, "name", required=False)
    verify_method = cfg["verifyEmailMethod"] if cfg["requireEmailVerification"] else None
    redirect_to = link_redirect(store, body, verify_method)
    if cfg["disableSignup"]:
        raise ApiError(403, "AUTH_SIGNUP_DISABLED", "User signups are disabled for this project.")
    check_password_policy(cfg, password)
    if store.user_by_email(email):
        raise ApiError(409, "AUTH_EMAIL_EXISTS", "User already exists")
    user = store.create_user(email, password, {"name": name} if name is not None else {})
    if not cfg["requireEmailVerification"]:
        return session_response(store, user, ctype, {"requireEmailVerification": False})
    if cfg["emailDeliveryFailure"]:
        raise ApiError(cfg["emailDeliveryFailure"], "AUTH_VERIFICATION_EMAIL_DELIVERY_FAILED",
                       "The user account was created, but the verification email could not "
                       "be sent.",
                       "The user account already exists. Retry delivery with POST "
                       "/api/auth/email/send-verification instead of registering again.")
    send_verification(store, email, redirect_to)
    if spec_mode(store):  # README note 5: the spec's shape
        return Response(200, {"user": store.user_view(user), "accessToken": None,
                              "csrfToken": None, "refreshToken": None,
                              "requireEmailVerification": True})
    return Response(200, {"accessToken": None, "requireEmailVerification": True})


def get_profile(store, req):
    user_id = req.params["userId"]
    if not UUID_RE.fullmatch(user_id):
        raise invalid_input("Invalid user ID format")
    user = store.users.get(user_id.lower())
    if not user:
        raise ApiError(404, "NOT_FOUND", "User not found")
    return Response(200, {"id": user["id"], "profile": user["profile"]})


def update_profile(store, req):
    user = authenticate(store, req)
    body = req.json_object()
    if "profile" not in body:
        raise invalid_input("profile: Required")
    profile = body["profile"]
    if not isinstance(profile, dict):
        raise invalid_input("profile: Expected object")
    string_field(profile, "name", required=False)
    string_field(profile, "avatar_url", required=False, fmt="uri")
    user["profile"] = {**user["profile"], **profile}
    store.touch(user)
    return Response(200, {"id": user["id"], "profile": user["profile"]})


# ---- sessions -------------------------------------------------------------------------

def sign_in(store, req):
    """POST /sessions: password (method omitted or "password") or email OTP."""
    cfg = store.config
    ctype = client_type(req)
    body = req.json_object()
    method = body.get("method", "password")
    if method == "otp":
        return _sign_in_with_otp(store, body, ctype)
    if method != "password":
        raise invalid_input("method: Expected 'password' or 'otp'")
    email = string_field(body, "email", fmt="email")
    password = string_field(body, "password")
    user = store.user_by_email(email)
    if not store.check_password(user, password):
        raise ApiError(401, "AUTH_UNAUTHORIZED", "Invalid credentials")
    if cfg["requireEmailVerification"] and not user["emailVerified"]:
        raise ApiError(403, "FORBIDDEN", "Email verification required",
                       "Please verify your email address before logging in")
    return session_response(store, user, ctype)


def _sign_in_with_otp(store, body, ctype):
    email = string_field(body, "email", fmt="email")
    otp = string_field(body, "otp", pattern=SIX_DIGITS_RE)
    name = string_field(body, "name", required=False, min_len=1, max_len=100)
    record = store.find_otp(SIGN_IN, "code", otp, email=email)
    if not store.usable(record):
        raise invalid_input("Invalid or expired sign-in code")
    record["consumed"] = True
    user = store.user_by_email(email)
    if not user:
        if store.config["disableSignup"]:
            raise ApiError(403, "AUTH_SIGNUP_DISABLED", "User signups are disabled for this project.")
        user = store.create_user(email, None, {"name": name} if name else {}, verified=True)
    elif not user["emailVerified"]:
        user["emailVerified"] = True  # the code proved the address
        store.touch(user)
    return session_response(store, user, ctype)


def send_sign_in_otp(store, req):
    email = string_field(req.json_object(), "email", fmt="email")
    code, expires = store.issue_otp(email, SIGN_IN, "code", SIGN_IN_OTP_TTL)
    store.send_email(email, "sign-in-code", code=code, expiresAt=iso(expires))
    return Response(202, {"success": True, "message": "If sign-in is available for this email, "
                                                      "we have sent a verification code."})


def refresh(store, req):
    # Spec: 401 when no refresh token is given; backend: 400 for non-web clients (note 2).
    missing = (ApiError(401, "AUTH_UNAUTHORIZED", "No refresh token provided")
               if spec_mode(store) else invalid_input("refreshToken: Required"))
    try:
        ctype = client_type(req)
    except ApiError:
        raise missing  # the spec documents no 400 here
    if ctype == "web":
        token = req.cookie(REFRESH_COOKIE)
        if not token:
            raise ApiError(401, "AUTH_UNAUTHORIZED", "No refresh token provided")
    else:
        try:
            token = req.json_object().get("refreshToken")
        except ApiError:
            token = None
        if not isinstance(token, str) or not token:
            raise missing
    payload = store.verify_token(token, "refresh")
    if not payload:
        raise ApiError(401, "AUTH_UNAUTHORIZED", "Invalid or expired refresh token")
    if ctype == "web" and req.header("X-CSRF-Token") != store.csrf_token(token):
        raise ApiError(403, "FORBIDDEN", "Invalid CSRF token")
    user = store.users.get(payload["sub"])
    if not user:
        raise ApiError(401, "AUTH_USER_NOT_FOUND", "User not found")
    return session_response(store, user, ctype)


def logout(store, req):
    # Never rejects the query: the spec documents only 200 and 403 here.
    ctype = req.query.get("client_type", ["web"])[0]
    headers = []
    if ctype == "web":
        token = req.cookie(REFRESH_COOKIE)
        if token and store.verify_token(token, "refresh") and \
                req.header("X-CSRF-Token") != store.csrf_token(token):
            raise ApiError(403, "FORBIDDEN", "Invalid CSRF token")
        headers.append(("Set-Cookie", f"{REFRESH_COOKIE}=; Path={store.base_path}/api/auth; "
                        "HttpOnly; Max-Age=0"))
    return Response(200, {"success": True, "message": "Logged out successfully"}, headers)


def current_session(store, req):
    return Response(200, {"user": store.user_view(authenticate(store, req))})


# ---- email verification -----------------------------------------------------------------

def send_verification_email(store, req):
    body = req.json_object()
    email = string_field(body, "email", fmt="email")
    method = store.config["verifyEmailMethod"]
    redirect_to = link_redirect(store, body, method)
    if store.user_by_email(email):  # silent otherwise: no user enumeration
        send_verification(store, email, redirect_to)
    return Response(202, {"success": True, "message": "If your email is registered, we have "
                          f"sent you a verification {method}. Please check your inbox."})


def verify_email(store, req):
    ctype = client_type(req)
    body = req.json_object()
    email = string_field(body, "email", fmt="email")
    otp = string_field(body, "otp", pattern=SIX_DIGITS_RE)
    record = store.find_otp(VERIFY_EMAIL, "code", otp, email=email)
    user = store.user_by_email(email)
    if not store.usable(record) or not user:
        raise invalid_secret(store, "Invalid or expired verification code")
    record["consumed"] = True
    user["emailVerified"] = True
    store.touch(user)
    return session_response(store, user, ctype)


def _link_target(store, req, purpose):
    """The record of a link token, or a 400 when the token is unknown or has no target."""
    token = req.query_one("token")
    record = store.find_otp(purpose, "token", token) if token else None
    if not record or not record["redirectTo"]:
        raise invalid_input("Invalid or expired verification token")
    return token, record


def verify_email_link(store, req):
    _, record = _link_target(store, req, VERIFY_EMAIL)
    status = {"insforge_type": "verify_email"}
    if not store.usable(record):
        return redirect(add_query(record["redirectTo"], {
            **status, "insforge_status": "error",
            "insforge_error": "Invalid or expired verification token"}))
    record["consumed"] = True
    user = store.user_by_email(record["email"])
    if user:
        user["emailVerified"] = True
        store.touch(user)
    return redirect(add_query(record["redirectTo"], {**status, "insforge_status": "success"}))


# ---- password reset -----------------------------------------------------------------------

def send_reset_password(store, req):
    body = req.json_object()
    email = string_field(body, "email", fmt="email")
    method = store.config["resetPasswordMethod"]
    redirect_to = link_redirect(store, body, method)
    if store.user_by_email(email):
        if method == "link":
            token, expires = store.issue_otp(email, RESET_PASSWORD, "token", LINK_TTL,
                                             redirect_to)
            link = f"{store.base_url}/api/auth/email/reset-password-link?token={token}"
            store.send_email(email, "reset-password-link", token=token, link=link,
                             redirectTo=redirect_to, expiresAt=iso(expires))
        else:
            code, expires = store.issue_otp(email, RESET_PASSWORD, "code", CODE_TTL)
            store.send_email(email, "reset-password-code", code=code, expiresAt=iso(expires))
    return Response(202, {"success": True, "message": "If your email is registered, we have "
                          f"sent you a password reset {method}. Please check your inbox."})


def exchange_reset_token(store, req):
    body = req.json_object()
    email = string_field(body, "email", fmt="email")
    code = string_field(body, "code", pattern=SIX_DIGITS_RE)
    record = store.find_otp(RESET_PASSWORD, "code", code, email=email)
    if not store.usable(record):
        raise invalid_secret(store, "Invalid or expired verification code")
    # The code is consumed and replaced by a reset token (as the backend's upsert).
    token, expires = store.issue_otp(email, RESET_PASSWORD, "token", LINK_TTL)
    return Response(200, {"token": token, "expiresAt": iso(expires)})


def reset_password_link(store, req):
    token, record = _link_target(store, req, RESET_PASSWORD)
    status = {"insforge_type": "reset_password"}
    if not store.usable(record):
        return redirect(add_query(record["redirectTo"], {
            **status, "insforge_status": "error",
            "insforge_error": "Invalid or expired reset token"}))
    # Not consumed here: the app posts this same token to /email/reset-password.
    return redirect(add_query(record["redirectTo"],
                              {"token": token, **status, "insforge_status": "ready"}))


def reset_password(store, req):
    body = req.json_object()
    new_password = string_field(body, "newPassword")
    token = string_field(body, "otp")
    check_password_policy(store.config, new_password)  # first, so the token can be retried
    record = store.find_otp(RESET_PASSWORD, "token", token)
    user = store.user_by_email(record["email"]) if record else None
    if not store.usable(record) or not user:
        raise invalid_secret(store, "Invalid or expired verification token")
    record["consumed"] = True
    store.set_password(user, new_password)
    return Response(200, {"message": "Password reset successfully. Please login with your "
                                     "new password."})


# ---- OAuth with PKCE ------------------------------------------------------------------------

def _provider(store, req):
    provider = req.params["provider"]
    if provider not in PROVIDERS:
        raise invalid_input(f"Unsupported OAuth provider: {provider}. Supported providers: "
                            + ", ".join(PROVIDERS))
    return provider


def oauth_init(store, req):
    provider = _provider(store, req)
    redirect_uri = req.query_one("redirect_uri")
    challenge = req.query_one("code_challenge")
    if not redirect_uri:
        raise invalid_input("Redirect URI is required")
    string_field({"redirect_uri": redirect_uri}, "redirect_uri", fmt="uri")
    # README note 3: required here, as by the backend (the spec marks it optional).
    if not challenge or not PKCE_RE.fullmatch(challenge):
        raise invalid_input("code_challenge: Required (Base64URL(SHA256(code_verifier)), "
                            "43-128 characters)")
    check_redirect(store, redirect_uri)
    if not spec_mode(store) and provider in UNIMPLEMENTED_PROVIDERS:  # README note 4
        raise ApiError(501, "NOT_IMPLEMENTED", f"{provider} OAuth is not implemented yet")
    state = store.sign_state({"provider": provider, "redirectUri": redirect_uri,
                              "codeChallenge": challenge})
    callback = f"{store.base_url}/api/auth/oauth/{provider}/callback"
    auth_url = add_query(f"{store.base_url}/__test__/oauth/{provider}/authorize",
                         {"client_id": "insforge-test", "response_type": "code",
                          "redirect_uri": callback, "state": state})
    return Response(200, {"authUrl": auth_url})


def oauth_callback(store, req):
    """The backend's provider callback: checks state (400 when missing or bad, README note
    9), signs the user in, and redirects to the app with a one-time insforge_code."""
    provider = _provider(store, req)
    fields = req.form() if req.method == "POST" else {k: v[0] for k, v in req.query.items()}
    state = store.verify_state(fields.get("state"))
    if not state or state.get("provider") != provider:
        raise invalid_input("Invalid state parameter")
    target = state["redirectUri"]
    identity = store.provider_codes.pop(fields.get("code") or "", None)
    if not identity:
        return redirect(add_query(target, {"error": fields.get("error")
                                           or "OAuth Authentication Failed"}))
    user = next((u for u in store.users.values()
                 if (provider, identity["id"]) in u["identities"]), None)
    user = user or store.user_by_email(identity["email"].lower())
    if user is None:
        if store.config["disableSignup"]:
            return redirect(add_query(target, {
                "error": "User signups are disabled for this project."}))
        user = store.create_user(identity["email"].lower(), None, {"name": identity["name"]},
                                 verified=True, identity=(provider, identity["id"]))
    else:
        if (provider, identity["id"]) not in user["identities"]:
            user["identities"].append((provider, identity["id"]))
        user["emailVerified"] = True  # the provider vouches for the address
        store.touch(user)
    code = secrets.token_hex(32)
    store.pkce_codes[code] = {"userId": user["id"], "challenge": state["codeChallenge"],
                              "expiresAt": store.now() + PKCE_CODE_TTL}
    return redirect(add_query(target, {"insforge_code": code}))


def oauth_exchange(store, req):
    ctype = client_type(req)
    body = req.json_object()
    code = string_field(body, "code")
    verifier = string_field(body, "code_verifier")
    if not PKCE_RE.fullmatch(verifier):
        raise invalid_input("code_verifier: Must be 43-128 characters of [A-Za-z0-9-._~]")
    data = store.pkce_codes.pop(code, None)  # one-time, even when the verifier is wrong
    if not data or data["expiresAt"] <= store.now():
        raise invalid_secret(store, "Invalid or expired code")
    if pkce_s256(verifier) != data["challenge"]:
        raise ApiError(401 if spec_mode(store) else 400, "AUTH_UNAUTHORIZED",
                       "PKCE verification failed")
    user = store.users.get(data["userId"])
    if not user:
        raise ApiError(404, "AUTH_USER_NOT_FOUND", "User not found")
    return session_response(store, user, ctype)


# (method, path under /api/auth, operation name used by stats and forceRateLimit, handler)
ROUTES = [
    ("GET", "/public-config", "publicConfig", public_config),
    ("POST", "/users", "users", sign_up),
    ("GET", "/profiles/{userId}", "profiles", get_profile),
    ("PATCH", "/profiles/current", "profilesCurrent", update_profile),
    ("POST", "/sessions", "sessions", sign_in),
    ("GET", "/sessions/current", "sessionsCurrent", current_session),
    ("POST", "/refresh", "refresh", refresh),
    ("POST", "/logout", "logout", logout),
    ("POST", "/email/send-otp", "sendOtp", send_sign_in_otp),
    ("POST", "/email/send-verification", "sendVerification", send_verification_email),
    ("POST", "/email/verify", "verify", verify_email),
    ("GET", "/email/verify-link", "verifyLink", verify_email_link),
    ("POST", "/email/send-reset-password", "sendResetPassword", send_reset_password),
    ("POST", "/email/exchange-reset-password-token", "exchangeResetPasswordToken",
     exchange_reset_token),
    ("GET", "/email/reset-password-link", "resetPasswordLink", reset_password_link),
    ("POST", "/email/reset-password", "resetPassword", reset_password),
    ("POST", "/oauth/exchange", "oauthExchange", oauth_exchange),
    ("GET", "/oauth/{provider}", "oauthInit", oauth_init),
    ("GET", "/oauth/{provider}/callback", "oauthCallback", oauth_callback),
    ("POST", "/oauth/{provider}/callback", "oauthCallback", oauth_callback),
]
