#!/usr/bin/env bash
# Generates the provider's signing keys with rnbyc into DIR:
#   jwks-private.json  es1 (ES256) + rs1 (RS256): what the provider starts with
#   jwks-rotated.json  rs2 (RS256, new kid, first: glewlwyd signs with the first key) + es1 + rs1,
#                      what the key-rotation test switches to
#   client-es256.pem, client-rs256.pem, client-eddsa.pem  the private_key_jwt clients' keys
# Usage: make-keys.sh DIR
set -euo pipefail
dir=$1
umask 077
rnbyc -j -g EC256 -k es1 -a ES256 -g RSA2048 -k rs1 -a RS256 -o "$dir/jwks-private.json" -p "$dir/jwks-public.json"
rnbyc -j -g RSA2048 -k rs2 -a RS256 -o "$dir/rotation-key.json" -p "$dir/rotation-public.json"
python3 - "$dir" <<'PY'
import json, sys
d = sys.argv[1]
base = json.load(open(f"{d}/jwks-private.json"))
extra = json.load(open(f"{d}/rotation-key.json"))
# glewlwyd signs with the first key of its JWKS: the new key goes first.
base["keys"] = extra["keys"] + base["keys"]
json.dump(base, open(f"{d}/jwks-rotated.json", "w"))
PY
# The private_key_jwt clients' keys (the client side: PEM, made by openssl, 0600), one per
# algorithm; provision.sh registers their public JWKs with the clients.
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/client-es256.pem" 2>/dev/null
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$dir/client-rs256.pem" 2>/dev/null
openssl genpkey -algorithm ED25519 -out "$dir/client-eddsa.pem" 2>/dev/null
