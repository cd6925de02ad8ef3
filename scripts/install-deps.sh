#!/usr/bin/env bash
# Installs the Debian packages listed in scripts/deps/*.txt that are missing (as root, or with sudo).
# Usage: scripts/install-deps.sh [list-name ...]   (default: every list)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lists=()
if (($#)); then for n in "$@"; do lists+=("$here/deps/$n.txt"); done; else lists=("$here"/deps/*.txt); fi
wanted=$(grep -hvE '^\s*(#|$)' "${lists[@]}" | sort -u)
missing=()
for pkg in $wanted; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
((${#missing[@]})) || exit 0
echo "install-deps: installing ${missing[*]}" >&2
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
# A stale package index makes installs fail on a fresh machine: refresh it once when needed.
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
    $sudo apt-get update -qq >/dev/null
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}
