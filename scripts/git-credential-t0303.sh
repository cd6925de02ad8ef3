#!/usr/bin/env bash
# git's own external credential-helper test (t/t0303-credential-external.sh with
# t/lib-credential.sh, vendored verbatim in Tests/GitCredentialHelperSuite, see its README) against
# git-credential-credvault, with the installed git as git's harness would run a built one.
#
# Usage: scripts/git-credential-t0303.sh [file|secret-service]
#   file            (default) the sealed-file backend, a throw-away vault
#   secret-service  the Secret Service: inside the private bus of scripts/with-keyring.sh (used
#                   as it is when already inside one, CREDVAULT_TEST_KEYRING=unlocked; else made)
# Env: CV         the credvault executable (default .build/debug/credvault; credvault-full
#                 must be beside it for secret-service)
#      GIT        the directory of the git to test with (default: the one on PATH)
#      KEEP=1     keeps the work directory; VERBOSE=1 passes -v to git's harness
# Checks that need git >= 2.41 (an older "git credential" drops password_expiry_utc,
# oauth_refresh_token and wwwauth[]) are skipped with GIT_SKIP_TESTS when the git is older, and
# listed. The last line is "N passed, M failed, K skipped (git VERSION, MODE)"; the exit status
# is 0 only when nothing failed and the harness finished.
set -u
cd "$(dirname "$0")/.."
root=$PWD
suite="$root/Tests/GitCredentialHelperSuite/t"
mode=${1:-file}
CV=${CV:-$root/.build/debug/credvault}
gitdir=${GIT:-$(dirname "$(command -v git)")}

case "$mode" in
    file | secret-service) ;;
    *) echo "usage: $0 [file|secret-service]" >&2; exit 2 ;;
esac
[ -x "$CV" ] || { echo "no credvault at CV=$CV (swift build first)" >&2; exit 2; }
[ -x "$gitdir/git" ] || { echo "no git in $gitdir: run scripts/install-deps.sh credential-helpers" >&2; exit 2; }
if [ "$mode" = secret-service ] && [ "${CREDVAULT_TEST_KEYRING:-}" != unlocked ]; then
    exec "$root/scripts/with-keyring.sh" --unlocked -- "$root/scripts/git-credential-t0303.sh" "$@"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/credvault-t0303.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
# A stand-in for a built git tree: git's t/ files, plus what a build would have left beside them.
cp -r "$suite" "$work/t"
mkdir -p "$work/templates/blt" "$work/t/helper" "$work/bin" "$work/home/data" "$work/home/state"
cat >"$work/GIT-BUILD-OPTIONS" <<'EOF'
SHELL_PATH='/bin/sh'
TEST_SHELL_PATH='/bin/sh'
PERL_PATH='/usr/bin/perl'
DIFF='diff'
PYTHON_PATH='/usr/bin/python3'
TAR='tar'
PAGER_ENV='LESS=FRX LV=-c'
X=''
EOF
cat >"$work/t/helper/test-tool" <<'EOF'
#!/bin/sh
echo "test-tool stub: '$*' is not available (no built git tree)" >&2
exit 99
EOF
chmod +x "$work/t/helper/test-tool"
# git runs git-credential-credvault: a link to credvault (credvault-full is found beside the target).
ln -s "$(cd "$(dirname "$CV")" && pwd)/$(basename "$CV")" "$work/bin/git-credential-credvault"
export PATH="$work/bin:$PATH"
export CREDVAULT_BACKEND="$mode" XDG_STATE_HOME="$work/home/state"
# The sealed file lives in the work directory; the Secret Service keeps the bus's XDG_DATA_HOME.
[ "$mode" = file ] && export XDG_DATA_HOME="$work/home/data"

version=$("$gitdir/git" --version | sed 's/^git version //')
skip=""
if ! printf '2.41.0\n%s\n' "$version" | sort -V -C; then
    # The checks of t0303 (this copy) that need git >= 2.41 to pass the fields through:
    # 16 "not confused by long header" (wwwauth[]), 17-19 password_expiry_utc, 20-21 oauth_refresh_token.
    skip="t0303.16 t0303.17 t0303.18 t0303.19 t0303.20 t0303.21"
fi

cd "$work/t"
GIT_TEST_INSTALLED="$gitdir" GIT_TEST_CREDENTIAL_HELPER=credvault GIT_SKIP_TESTS="$skip" TEST_OUTPUT_DIRECTORY="$work" \
    sh ./t0303-credential-external.sh ${VERBOSE:+-v} >"$work/out.log" 2>&1
status=$?
cat "$work/out.log"
skipped=$(grep -c '^ok .*# skip' "$work/out.log")
passed=$(($(grep -c '^ok ' "$work/out.log") - skipped))
failed=$(grep -c '^not ok ' "$work/out.log")
finished=1
grep -q '^1\.\.[0-9]' "$work/out.log" || { echo "# the harness did not finish (status $status)"; finished=0; }
[ -n "$skip" ] && echo "# skipped, as git $version drops the fields they need (git >= 2.41 passes them): $skip"
echo "$passed passed, $failed failed, $skipped skipped (git $version, $mode)"
[ "$failed" -eq 0 ] && [ "$finished" -eq 1 ] && [ "$status" -eq 0 ]
