#!/usr/bin/env bash
# Writes a glewlwyd configuration for a private test instance, derived from the packaged
# /etc/glewlwyd/glewlwyd.conf (a hand-written minimal one is refused by glewlwyd 2.7).
# Usage: make-config.sh PORT DATABASE_FILE > glewlwyd.conf
set -euo pipefail
port=$1 db=$2
src=/etc/glewlwyd/glewlwyd.conf
[ -r "$src" ] || { echo "make-config: $src missing: install the glewlwyd package" >&2; exit 1; }
sed -E \
    -e "s|^port=.*|port=$port|" \
    -e "s|^#?bind_address=.*|bind_address=\"127.0.0.1\"|" \
    -e "s|^external_url=.*|external_url=\"http://127.0.0.1:$port\"|" \
    -e "s|^log_mode=.*|log_mode=\"console\"|" \
    -e "s|^log_level=.*|log_level=\"DEBUG\"|" \
    -e "s|^log_file=.*||" \
    -e "s|^@include .*||" \
    "$src"
cat <<CONF
database =
{
  type = "sqlite3"
  path = "$db"
};
CONF
