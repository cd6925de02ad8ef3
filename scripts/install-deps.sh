#!/usr/bin/env bash
# Installs the Debian packages listed in scripts/deps/*.txt that are missing (as root, or with sudo),
# then, on a machine that has the offline Swift package bundles beside the repository
# (../shared/vendor, see its README), makes SwiftPM resolve the package's GitHub dependencies
# from them (vendor/mirrors.sh). Without that directory SwiftPM's configuration is left alone.
# Usage: scripts/install-deps.sh [list-name ...]   (default: every list)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
vendor="$root/../shared/vendor"
lists=()
if (($#)); then for n in "$@"; do lists+=("$here/deps/$n.txt"); done; else lists=("$here"/deps/*.txt); fi
wanted=$(grep -hvE '^\s*(#|$)' "${lists[@]}" | sort -u)
# mirrors.sh clones the bundles with git and edits SwiftPM's mirrors.json with python3.
[ ! -d "$vendor" ] || wanted=$(printf '%s\n' $wanted git python3 | sort -u)
missing=()
for pkg in $wanted; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
    echo "install-deps: installing ${missing[*]}" >&2
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    # A stale package index makes installs fail on a fresh machine: refresh it once when needed.
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 || {
        $sudo apt-get update -qq >/dev/null
        $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    }
fi
# The mirrors are the user's (~/.swiftpm/configuration/mirrors.json), so every package on the
# machine sees them, the consumer checks' included. Idempotent; under a lock because several
# scripts (the test services, two test runs side by side) call this script at once. Its report
# goes to stderr: the services' start scripts call this one, and their stdout is the tests'
# environment.
if [ -d "$vendor" ]; then
    mkdir -p "$HOME/.cache"
    flock "$HOME/.cache/swiftpm-offline-mirrors.lock" "$vendor/mirrors.sh" >&2
fi
