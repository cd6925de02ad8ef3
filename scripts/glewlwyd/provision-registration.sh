#!/usr/bin/env bash
# Adds glewlwyd plugin "reg" for the dynamic client registration tests (RFC 7591/7592): a copy
# of plugin "oidc" (same keys, PKCE, token lifetimes) with open registration and management.
# Kept on its own plugin so that no other test sees a /register endpoint or registered clients.
#   register-client-allowed         : adds POST <issuer>/register and registration_endpoint
#   register-client-auth-scope []   : open registration (no initial access token)
#   register-client-management-allowed : RFC 7592 GET/PUT/DELETE at registration_client_uri
#   resource-scope                  : adds http://127.0.0.1:29410-29425/mcp (scopes openid, mcp)
# glewlwyd reads a plugin's parameters only when the plugin starts: this script creates the
# plugin with its final parameters (a later PUT would need disable + enable).
# Usage: provision-registration.sh BASE_URL STATE_DIR  (after provision.sh signed the admin in)
set -euo pipefail
base=$1 dir=$2
api=$base/api
admin=$dir/admin.cookies
oidc=$(curl -sSf -b "$admin" "$api/mod/plugin/oidc")
body=$(OIDC_PLUGIN=$oidc python3 - "$base" <<'PY'
import json, os, sys
base = sys.argv[1]
plugin = json.loads(os.environ["OIDC_PLUGIN"])
params = plugin["parameters"]
params.update({"iss": f"{base}/api/reg", "register-client-allowed": True, "register-client-auth-scope": [],
               "register-client-management-allowed": True, "register-client-token-one-use": False,
               "session-cookie-name": "GLEWLWYD_REG_SID"})
# The MCP profile tests' resource servers (Tests/.../TestResourceServer.swift): glewlwyd compares
# resources as exact strings, so each loopback port a test server may bind is listed (a pool:
# parallel runs each take a free one). Granted with scope openid or mcp.
pool = [f"http://127.0.0.1:{port}/mcp" for port in range(29410, 29426)]
params["resource-scope"] = dict(params.get("resource-scope", {}))
params["resource-scope"]["openid"] = list(params["resource-scope"].get("openid", [])) + pool
params["resource-scope"]["mcp"] = pool
print(json.dumps({"module": "oidc", "name": "reg", "display_name": "reg", "enabled": True, "parameters": params}))
PY
)
out=$(curl -sS -b "$admin" -H 'content-type: application/json' -X POST "$api/mod/plugin/" -d "$body" -w '\n%{http_code}')
code=${out##*$'\n'}
[ "$code" = 200 ] || { echo "provision-registration: POST mod/plugin/ -> $code ${out%$'\n'*}" >&2; exit 1; }
