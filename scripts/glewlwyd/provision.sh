#!/usr/bin/env bash
# Provisions a fresh glewlwyd through its admin API (admin/password from the packaged database):
#   plugin "oidc"  : OpenID Connect, PKCE S256 required (plain refused), one-use rotating refresh
#                    tokens with replay revocation, device flow, client credentials, revocation
#                    and introspection, end session; access tokens live 3600 s
#   plugin "short" : the same with 3 s access tokens (the "expired access token" test)
#   plugin "dpop"  : the same with DPoP nonces mandatory (counter 100)
#   plugin "par"   : the same with pushed authorization requests required (RFC 9126) and DPoP
#                    nonces mandatory; "oidc" allows PAR without requiring it
#   plugin "parshort": PAR allowed, request_uri lifetime 2 s (the "expired request_uri" test)
#   plugin "resources": the same without refresh token rotation (one refresh token serves every
#                    resource: glewlwyd's rotation narrows it to the resource last refreshed)
#   every plugin maps scope "openid" to the resources (RFC 8707) https://api.example.com/ and
#     http://127.0.0.1:9999/mcp, and scope "api" (client credentials) to https://api.example.com/
#     (exact strings: glewlwyd compares them as such, trailing slash included)
#   user alice/password; public client "cli" (loopback + custom-scheme redirects);
#   confidential client "svc" (client credentials, scope "api", secret in DIR/svc-secret)
#   private_key_jwt clients "pk-es256", "pk-rs256", "pk-eddsa" (client credentials, scope "api",
#     keys DIR/client-*.pem from make-keys.sh, their public JWKs registered as the clients'
#     "jwks" with kid = the client id), "pk-code" (code, refresh and device with the "cli" redirects,
#     the ES256 key); client_secret_jwt client "sj" (client credentials, secret in DIR/sj-secret)
#   client assertions need the plugin's "request-parameter-allow" (glewlwyd reads them with its
#   request-object code) and "client-jwks-parameter" naming the client property with the JWKS
# Usage: provision.sh BASE_URL STATE_DIR REDIRECT_URI...
set -euo pipefail
base=$1 dir=$2; shift 2
api=$base/api
json='content-type: application/json'
admin=$dir/admin.cookies
rm -f "$admin"
curl -sSf -c "$admin" -H "$json" -X POST "$api/auth/" -d '{"username":"admin","password":"password"}' -o /dev/null

post() { # path body
    local out code
    out=$(curl -sS -b "$admin" -H "$json" -X POST "$api/$1" -d @- -w '\n%{http_code}')
    code=${out##*$'\n'}
    [ "$code" = 200 ] || { echo "provision: POST $1 -> $code ${out%$'\n'*}" >&2; exit 1; }
}

post scope/ <<<'{"name":"api","display_name":"api","description":"service API","password_required":false,"scheme":{}}'
# scope "mcp": what the MCP profile's test resource server asks for in its step-up challenge
# (alice may be granted it; plugin "reg" maps it to the test resource servers' URLs).
post scope/ <<<'{"name":"mcp","display_name":"mcp","description":"MCP test resource","password_required":false,"scheme":{}}'

plugin() { # name access-token-seconds
    python3 - "$1" "$2" "$base" "$dir/jwks-private.json" <<'PY'
import json, sys
name, ttl, base, jwks = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
params = {
    "iss": f"{base}/api/{name}", "jwks-private": json.dumps(json.load(open(jwks))),
    "default-kid": "es1", "jwks-show": True, "jwt-type": "ecdsa", "jwt-key-size": "256",
    "access-token-duration": ttl, "refresh-token-duration": 1209600, "code-duration": 600,
    "refresh-token-rolling": True, "refresh-token-one-use": "always",
    "auth-type-code-revoke-replayed": True,
    "allow-non-oidc": True, "auth-type-code-enabled": True, "auth-type-refresh-enabled": True,
    "auth-type-client-enabled": True, "auth-type-device-enabled": True,
    "device-authorization-expiration": 600, "device-authorization-interval": 1,
    "auth-type-token-enabled": False, "auth-type-id-token-enabled": False,
    "auth-type-password-enabled": False, "auth-type-none-enabled": False,
    "pkce-allowed": True, "pkce-method-plain-allowed": False, "pkce-required": True,
    "introspection-revocation-allowed": True, "introspection-revocation-allow-target-client": True,
    "introspection-revocation-auth-scope": ["openid"],
    "session-management-allowed": True, "session-cookie-name": "GLEWLWYD_OIDC_SID",
    "session-cookie-expiration": 2419200, "oauth-dpop-iat-duration": 60, "subject-type": "public",
    "scope": [], "claims": [], "name-claim": "on-demand", "email-claim": "mandatory",
    "oauth-dpop-allowed": True,
    "request-parameter-allow": True, "client-jwks-parameter": "jwks",
    # PAR allowed everywhere (the discovery document then names the endpoint; plain requests still
    # work). The request_uri prefix is mandatory once PAR is allowed: without it the plugin does not load.
    "oauth-par-allowed": True, "oauth-par-required": False,
    "oauth-par-request_uri-prefix": "urn:ietf:params:oauth:request_uri:", "oauth-par-duration": 90,
    "resource-allowed": True, "resource-scope-and-client-property": False,
    "resource-scope": {"openid": ["https://api.example.com/", "http://127.0.0.1:9999/mcp"],
                       "api": ["https://api.example.com/"]},
}
print(json.dumps({"module": "oidc", "name": name, "display_name": name, "enabled": True,
                  "parameters": params}))
PY
}
plugin oidc 3600 | post mod/plugin/
plugin short 3 | post mod/plugin/
# plugin "dpop": the same with DPoP server nonces mandatory (RFC 9449 section 8). glewlwyd keeps one
# nonce per client for the whole server and replaces it after "oauth-dpop-nonce-counter" successful
# proofs; a large counter keeps parallel tests of one client from rotating each other's nonce.
plugin dpop 3600 | python3 -c '
import json, sys
p = json.load(sys.stdin)
p["parameters"].update({"oauth-dpop-nonce-mandatory": True, "oauth-dpop-nonce-counter": 100})
print(json.dumps(p))' | post mod/plugin/
# plugin "par": PAR required. glewlwyd then answers every plain authorization request of this plugin
# with a bare 403, so it is a plugin of its own. DPoP nonces mandatory as on "dpop" (the nonce is
# one per client for the whole server, hence the same large counter).
plugin par 3600 | python3 -c '
import json, sys
p = json.load(sys.stdin)
p["parameters"].update({"oauth-par-required": True, "oauth-dpop-nonce-mandatory": True, "oauth-dpop-nonce-counter": 100})
print(json.dumps(p))' | post mod/plugin/
# plugin "parshort": request_uris live 2 s (glewlwyd bounds only the first visit by it).
plugin parshort 3600 | python3 -c '
import json, sys
p = json.load(sys.stdin)
p["parameters"].update({"oauth-par-duration": 2})
print(json.dumps(p))' | post mod/plugin/

# plugin "resources": no rotation ("refresh-token-one-use" never; the answer to a refresh then
# carries no refresh token and the one held stays valid), so that one session refreshes tokens
# for several resources.
plugin resources 3600 | python3 -c '
import json, sys
p = json.load(sys.stdin)
p["parameters"].update({"refresh-token-one-use": "never"})
print(json.dumps(p))' | post mod/plugin/

post user/ <<<'{"username":"alice","password":"password","name":"Alice","email":"alice@example.com","enabled":true,"scope":["openid","g_profile","mcp"]}'
redirects=$(python3 -c 'import json,sys;print(json.dumps(sys.argv[1:]))' "$@")
post client/ <<<"{\"client_id\":\"cli\",\"name\":\"CLI\",\"enabled\":true,\"confidential\":false,\"redirect_uri\":$redirects,\"authorization_type\":[\"code\",\"refresh_token\",\"device_authorization\"],\"scope\":[\"openid\"]}"
umask 077
head -c 24 /dev/urandom | base64 | tr -d '/+=' > "$dir/svc-secret"
post client/ <<<"{\"client_id\":\"svc\",\"name\":\"Service\",\"enabled\":true,\"confidential\":true,\"client_secret\":\"$(cat "$dir/svc-secret")\",\"token_endpoint_auth_method\":[\"client_secret_basic\",\"client_secret_post\"],\"redirect_uri\":[],\"authorization_type\":[\"client_credentials\"],\"scope\":[\"api\"]}"

jwk() { # PEM-file kid: the public JWK of a private key, as a one-key JWKS
    /usr/bin/python3 - "$1" "$2" <<'PY'
import base64, json, sys
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
def b64(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()
def num(i, size=None): return b64(i.to_bytes(size or (i.bit_length() + 7) // 8, "big"))
key = serialization.load_pem_private_key(open(sys.argv[1], "rb").read(), None).public_key()
if isinstance(key, ec.EllipticCurvePublicKey):
    n = key.public_numbers(); jwk = {"kty": "EC", "crv": "P-256", "x": num(n.x, 32), "y": num(n.y, 32), "alg": "ES256"}
elif isinstance(key, rsa.RSAPublicKey):
    n = key.public_numbers(); jwk = {"kty": "RSA", "n": num(n.n), "e": num(n.e), "alg": "RS256"}
else:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": b64(raw), "alg": "EdDSA"}
jwk.update({"kid": sys.argv[2], "use": "sig"})
print(json.dumps({"keys": [jwk]}))
PY
}
for alg in es256 rs256 eddsa; do
    post client/ <<<"{\"client_id\":\"pk-$alg\",\"name\":\"private_key_jwt $alg\",\"enabled\":true,\"confidential\":true,\"token_endpoint_auth_method\":[\"private_key_jwt\"],\"jwks\":$(jwk "$dir/client-$alg.pem" "pk-$alg"),\"redirect_uri\":[],\"authorization_type\":[\"client_credentials\"],\"scope\":[\"api\"]}"
done
post client/ <<<"{\"client_id\":\"pk-code\",\"name\":\"private_key_jwt code\",\"enabled\":true,\"confidential\":true,\"token_endpoint_auth_method\":[\"private_key_jwt\"],\"jwks\":$(jwk "$dir/client-es256.pem" "pk-code"),\"redirect_uri\":$redirects,\"authorization_type\":[\"code\",\"refresh_token\",\"device_authorization\"],\"scope\":[\"openid\"]}"
# HS256 needs a key of at least 32 bytes (RFC 7518 section 3.2): 48 random bytes give 64
# base64 characters, of which '/' and '+' take out a few.
head -c 48 /dev/urandom | base64 -w0 | tr -d '/+=' > "$dir/sj-secret"
post client/ <<<"{\"client_id\":\"sj\",\"name\":\"client_secret_jwt\",\"enabled\":true,\"confidential\":true,\"client_secret\":\"$(cat "$dir/sj-secret")\",\"token_endpoint_auth_method\":[\"client_secret_jwt\"],\"redirect_uri\":[],\"authorization_type\":[\"client_credentials\"],\"scope\":[\"api\"]}"
"$(dirname "$0")/provision-registration.sh" "$base" "$dir"
