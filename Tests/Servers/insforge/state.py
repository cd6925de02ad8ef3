"""In-memory state of the InsForge test server: configuration, users, one-time codes,
issued tokens, the fake mail outbox, counters and the test clock.

Everything lives in dicts guarded by one lock (held for a whole request by the server),
so requests are atomic and the server stays deterministic."""

import copy
import hashlib
import hmac
import secrets
import threading
import time
import uuid
from collections import Counter, deque

from core import ApiError, iso, jwt_decode, jwt_encode, sha256_hex

# Lifetimes, as the backend (specs/README.md note 7, and the backend's constants).
CODE_TTL = 15 * 60  # 6-digit email verification and password reset codes
LINK_TTL = 24 * 60 * 60  # link tokens, and the reset token from the code exchange
SIGN_IN_OTP_TTL = 5 * 60
PKCE_CODE_TTL = 5 * 60  # insforge_code handed to the redirect URI
OAUTH_STATE_TTL = 60 * 60
SIGN_IN_WINDOW = 15 * 60  # rate-limit window for failed sign-ins

PROVIDERS = ("google", "github", "discord", "linkedin", "facebook", "instagram", "tiktok",
             "apple", "x", "spotify", "microsoft")
UNIMPLEMENTED_PROVIDERS = ("instagram", "tiktok", "spotify")  # backend answers 501

# Test-server configuration: key -> (default, validator). Set at startup with --config
# and per test with POST /__test__/config; POST /__test__/reset restores the startup values.
_bool = lambda v: isinstance(v, bool)  # noqa: E731
_int = lambda lo, hi: lambda v: isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi  # noqa: E731
_one_of = lambda *choices: lambda v: v in choices  # noqa: E731
_opt_str = lambda v: v is None or (isinstance(v, str) and v != "")  # noqa: E731
_str_list = lambda v: isinstance(v, list) and all(isinstance(s, str) for s in v)  # noqa: E731
_identity = lambda v: (isinstance(v, dict) and set(v) <= {"id", "email", "name"}  # noqa: E731
                       and all(isinstance(s, str) and s for s in v.values()))

CONFIG_SCHEMA = {
    # The backend's auth settings (also shown by GET /api/auth/public-config).
    "requireEmailVerification": (False, _bool),
    "verifyEmailMethod": ("code", _one_of("code", "link")),
    "resetPasswordMethod": ("code", _one_of("code", "link")),
    "passwordMinLength": (6, _int(4, 128)),
    "requireNumber": (False, _bool),
    "requireLowercase": (False, _bool),
    "requireUppercase": (False, _bool),
    "requireSpecialChar": (False, _bool),
    "disableSignup": (False, _bool),
    "allowedRedirectUrls": ([], _str_list),  # empty: every redirect URL is allowed
    "anonKey": (None, _opt_str),  # when set, POST /users needs it as Bearer (README note 6)
    # Test knobs.
    "mode": ("spec", _one_of("spec", "backend")),  # which side of README's differences
    "accessTokenTtlSeconds": (900, _int(1, 10 ** 8)),
    "refreshTokenTtlSeconds": (7 * 24 * 3600, _int(1, 10 ** 9)),
    "signInFailureLimit": (10, _int(0, 10 ** 6)),  # failed POST /sessions before 429; 0 = off
    "forceRateLimit": ([], _str_list),  # operation names that answer 429 right away
    "emailDeliveryFailure": (None, _one_of(None, 429, 500)),  # sign-up's delivery error
    "oauthUser": ({"id": "fake-user-1", "email": "oauth.user@example.com",
                   "name": "OAuth User"}, _identity),  # who signs in at the fake provider
    "oauthError": (None, _opt_str),  # the fake provider denies with this error
}


def default_config():
    return {key: copy.deepcopy(default) for key, (default, _) in CONFIG_SCHEMA.items()}


def merge_config(config, changes):
    """config updated with changes; ApiError(400) on an unknown key or a bad value."""
    if not isinstance(changes, dict):
        raise ApiError(400, "INVALID_INPUT", "config must be a JSON object")
    merged = copy.deepcopy(config)
    for key, value in changes.items():
        if key not in CONFIG_SCHEMA:
            raise ApiError(400, "INVALID_INPUT", f"unknown config key: {key}")
        if not CONFIG_SCHEMA[key][1](value):
            raise ApiError(400, "INVALID_INPUT", f"invalid value for {key}")
        if key == "oauthUser":
            value = {**merged["oauthUser"], **value}
        merged[key] = copy.deepcopy(value)
    return merged


def _hash_password(password, salt):
    return hashlib.pbkdf2_hmac("sha256", password.encode("utf-8"), salt, 1000)


class Store:
    """The state of one server instance: the root one at "/", or an isolated one at
    "/i/<id>" (POST /__test__/instances) so that tests running in parallel do not share
    users, configuration, counters or clock."""

    def __init__(self, startup_config, origin, base_path=""):
        self.lock = threading.RLock()
        self.secret = secrets.token_bytes(32)  # per run: signs JWTs, OAuth state, CSRF
        self.startup_config = startup_config
        self.base_path = base_path  # "" or "/i/<id>"
        self.base_url = origin + base_path  # links and URLs handed out point here
        self.reset()

    def reset(self):
        self.config = copy.deepcopy(self.startup_config)
        self.clock_offset = 0.0
        self.users = {}  # id -> user record (see create_user)
        self.ids_by_email = {}
        self.otps = {}  # (email, purpose) -> one active code or link token, as the backend
        self.outbox = []  # the "emails" sent, newest last
        self.token_owner = {}  # jti -> (user id, "access" | "refresh")
        self.dead_jtis = set()  # expired or revoked early through /__test__/
        self.provider_codes = {}  # fake provider's authorization codes -> identity
        self.pkce_codes = {}  # insforge_code -> {userId, challenge, provider, expiresAt}
        self.sign_in_failures = []  # times of failed POST /sessions
        self.reset_stats()

    def reset_stats(self):
        self.stats = Counter()
        self.requests = deque(maxlen=500)

    def now(self):
        return time.time() + self.clock_offset

    # ---- users ----

    def user_by_email(self, email):
        return self.users.get(self.ids_by_email.get(email))

    def create_user(self, email, password=None, profile=None, verified=False, identity=None):
        now = self.now()
        salt = secrets.token_bytes(16)
        user = {
            "id": str(uuid.uuid4()), "email": email,
            "salt": salt, "passwordHash": _hash_password(password, salt) if password else None,
            "profile": profile or {}, "emailVerified": verified,
            "identities": [],  # (provider, provider account id)
            "createdAt": now, "updatedAt": now,
        }
        if identity:
            user["identities"].append(identity)
        self.users[user["id"]] = user
        self.ids_by_email[email] = user["id"]
        return user

    def delete_user(self, user):
        del self.users[user["id"]]
        del self.ids_by_email[user["email"]]

    def check_password(self, user, password):
        if not user or not user["passwordHash"]:
            return False
        return hmac.compare_digest(_hash_password(password, user["salt"]), user["passwordHash"])

    def set_password(self, user, password):
        user["salt"] = secrets.token_bytes(16)
        user["passwordHash"] = _hash_password(password, user["salt"])
        user["updatedAt"] = self.now()

    def touch(self, user):
        user["updatedAt"] = self.now()

    @staticmethod
    def user_view(user):
        """The contract's UserResponse."""
        providers = (["email"] if user["passwordHash"] else []) + \
            sorted({p for p, _ in user["identities"]})
        return {
            "id": user["id"], "email": user["email"], "profile": user["profile"],
            "metadata": None, "emailVerified": user["emailVerified"], "providers": providers,
            "createdAt": iso(user["createdAt"]), "updatedAt": iso(user["updatedAt"]),
        }

    # ---- one-time codes and link tokens (one active per email and purpose) ----

    def issue_otp(self, email, purpose, kind, ttl, redirect_to=None):
        """A new 6-digit code (kind "code") or 64-hex token (kind "token"); it replaces the
        previous one for this email and purpose. Only its hash is kept here."""
        secret = f"{secrets.randbelow(10 ** 6):06d}" if kind == "code" else secrets.token_hex(32)
        expires_at = self.now() + ttl
        self.otps[(email, purpose)] = {
            "kind": kind, "hash": sha256_hex(secret), "expiresAt": expires_at,
            "redirectTo": redirect_to, "consumed": False, "email": email,
        }
        return secret, expires_at

    def find_otp(self, purpose, kind, secret, email=None):
        """The record matching secret (by email for codes, by hash for tokens), or None.
        Expired and consumed records are returned too: callers check usable()."""
        digest = sha256_hex(secret)
        if email is not None:
            candidates = [self.otps.get((email, purpose))]
        else:
            candidates = [r for (_, p), r in self.otps.items() if p == purpose]
        for record in candidates:
            if record and record["kind"] == kind and hmac.compare_digest(record["hash"], digest):
                return record
        return None

    def usable(self, record):
        return record is not None and not record["consumed"] and record["expiresAt"] > self.now()

    def send_email(self, email, kind, **fields):
        """'Sends' an email: appends it to the outbox that /__test__/last-email reads."""
        self.outbox.append({"email": email, "type": kind, "sentAt": iso(self.now()), **fields})

    # ---- JWTs (access and refresh tokens, OAuth state) ----

    def _issue(self, user, kind, payload, ttl):
        jti = secrets.token_hex(16)  # also makes every token distinct, even within a second
        now = int(self.now())
        self.token_owner[jti] = (user["id"], kind)
        return jwt_encode({**payload, "iat": now, "exp": now + ttl, "jti": jti}, self.secret)

    def issue_access_token(self, user):
        return self._issue(user, "access", {"sub": user["id"], "email": user["email"],
                                            "role": "authenticated"},
                           self.config["accessTokenTtlSeconds"])

    def issue_refresh_token(self, user):
        # A JWT as the backend's: stateless, so an older refresh token stays valid after a
        # refresh (README note 8) until it expires or /__test__/ revokes it.
        return self._issue(user, "refresh", {"sub": user["id"], "type": "refresh",
                                             "iss": "insforge"},
                           self.config["refreshTokenTtlSeconds"])

    def verify_token(self, token, kind):
        """The payload of a live token of this kind, or None."""
        payload = jwt_decode(token or "", self.secret, self.now())
        if not payload or payload.get("jti") in self.dead_jtis:
            return None
        is_refresh = payload.get("type") == "refresh"
        if (kind == "refresh") != is_refresh or not isinstance(payload.get("sub"), str):
            return None
        if kind == "access" and payload.get("role") != "authenticated":
            return None
        return payload

    def kill_tokens(self, kind, user_id=None):
        """Expires (access) or revokes (refresh) every live token of kind, or of one user."""
        doomed = {jti for jti, (uid, k) in self.token_owner.items()
                  if k == kind and (user_id is None or uid == user_id)} - self.dead_jtis
        self.dead_jtis |= doomed
        return len(doomed)

    def csrf_token(self, refresh_token):
        return hmac.new(self.secret, refresh_token.encode(), hashlib.sha256).hexdigest()

    def sign_state(self, payload):
        now = int(self.now())
        return jwt_encode({**payload, "purpose": "oauth_state", "iat": now,
                           "exp": now + OAUTH_STATE_TTL}, self.secret)

    def verify_state(self, state):
        payload = jwt_decode(state or "", self.secret, self.now())
        return payload if payload and payload.get("purpose") == "oauth_state" else None

    # ---- failed sign-in rate limit ----

    def sign_in_retry_after(self):
        """Seconds until POST /sessions is allowed again, or 0 when it is allowed now."""
        limit = self.config["signInFailureLimit"]
        now = self.now()
        self.sign_in_failures = [t for t in self.sign_in_failures if t > now - SIGN_IN_WINDOW]
        if not limit or len(self.sign_in_failures) < limit:
            return 0
        return max(1, int(self.sign_in_failures[0] + SIGN_IN_WINDOW - now + 0.999))
