# Sourced by build.sh and run.sh: the fuzz targets, the library modules they link, and their seeds.
# Adding a target: a directory Fuzz/NAME with its LLVMFuzzerTestOneInput (it `@testable import`s
# the module it fuzzes), and one line in fuzz_targets. A target or module whose sources have not
# landed yet is simply not available.

# TARGET              DIRECTORY                MODULE (built once, shared)   DECODES JSON
fuzz_targets='
sealed-file           Fuzz/SealedFile          CredentialVault               no
jose                  Fuzz/JOSE                CredentialVaultAuth           yes
redirect-url          Fuzz/RedirectURL         CredentialVaultAuth           no
provider-responses    Fuzz/ProviderResponses   CredentialVaultAuth           yes
helper-input          Fuzz/HelperInput         CredentialVaultCLI            yes
keyring-file          Fuzz/KeyringFile         CredentialVaultSecretService  no
'

# MODULE (module_dir)        IMPORTS (built before it)   LIBRARIES IT LINKS
# In dependency order: a module comes after the modules it imports.
fuzz_modules='
Logging                     -                           -
CredentialVault             Logging                     -lsodium
CredentialVaultAuth         CredentialVault,Logging     -lcrypto -lcurl
CredentialVaultCredentialServer CredentialVault         -
CredentialVaultCLI          CredentialVault,CredentialVaultCredentialServer -
CredentialVaultSecretService CredentialVault,Logging    -lsecret-1 -lgio-2.0 -lgobject-2.0 -lglib-2.0 -lcrypto -lsodium
'

# Modules of the package's dependencies (SwiftPM's checkouts, `swift package resolve`), with the
# settings SwiftPM gives them: their own package name (as SwiftPM spells it; the last
# -package-name wins) and swift-log's upcoming features from its manifest.
dependency_modules='
Logging    .build/checkouts/swift-log/Sources/Logging
'
dependency_flags() {
    case "$1" in
    Logging) echo -package-name swift_log -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility \
        -enable-upcoming-feature InternalImportsByDefault -enable-upcoming-feature NonisolatedNonsendingByDefault ;;
    esac
}

# The C compiler flags a module's system-library imports need beyond Sources/C*: libsecret's
# headers include GLib's, which are found through pkg-config.
module_cflags() {
    case "$1" in
    CredentialVaultSecretService) pkg-config --cflags libsecret-1 | tr ' ' '\n' | awk 'NF { printf "-Xcc %s ", $0 }' ;;
    esac
}

# Files shared by every target (Fuzz/Support: the seed writer).
fuzz_support() { echo Fuzz/Support/*.swift; }

_target_field() { awk -v t="$1" -v f="$2" '$1 == t { print $f }' <<<"$fuzz_targets"; }
_module_line() { awk -v m="$1" '$1 == m' <<<"$fuzz_modules"; }

target_dir() { _target_field "$1" 2; }
target_module() { _target_field "$1" 3; }
target_decodes_json() { [ "$(_target_field "$1" 4)" = yes ]; }

# The modules a module needs, itself last, each once.
module_closure() {
    local m=$1 imports dep
    imports=$(_module_line "$m" | awk '{ print $2 }')
    [ "$imports" = - ] || for dep in ${imports//,/ }; do module_closure "$dep"; done
    echo "$m"
}

# Where a module's sources are: Sources/MODULE, or a dependency's checkout.
module_dir() {
    local d
    d=$(awk -v m="$1" '$1 == m { print $2 }' <<<"$dependency_modules")
    echo "${d:-Sources/$1}"
}
module_available() { [ -n "$(_module_line "$1")" ] && [ -d "$(module_dir "$1")" ]; }
module_sources() { find "$(module_dir "$1")" -name '*.swift' | sort; }
module_imports() { local i; i=$(_module_line "$1" | awk '{ print $2 }'); [ "$i" = - ] || echo "${i//,/ }"; }
module_libraries() { _module_line "$1" | awk '{ for (i = 3; i <= NF; i++) if ($i != "-") printf "%s ", $i }'; }

# The modules a target links (what its module imports, then the module), in build order.
target_modules() { module_closure "$(target_module "$1")" | awk '!seen[$0]++'; }

target_available() {
    local dir m
    dir=$(target_dir "$1")
    [ -n "$dir" ] && [ -d "$dir" ] || return 1
    for m in $(target_modules "$1"); do module_available "$m" || return 1; done
}

available_targets() {
    local t
    for t in $(awk 'NF { print $1 }' <<<"$fuzz_targets"); do
        target_available "$t" && echo "$t"
    done
    return 0
}

# Seeds that crash today because of a defect not fixed yet (scripts/fuzz/known-crashes.txt):
# kept apart from the corpus, replayed and reported by every run.
known_crash_reason() {
    awk -v t="$1" -v s="$2" '$1 == t && $2 == s { $1 = ""; $2 = ""; sub(/^ +/, ""); print; found = 1 } END { exit !found }' \
        <(grep -vE '^\s*(#|$)' scripts/fuzz/known-crashes.txt)
}

target_seeds() {
    local target=$1 dir=$2
    case "$target" in
    sealed-file)  # the golden fixtures
        for v in Tests/CredentialVaultTests/Fixtures/*/; do
            for f in "$v"*.cvault; do cp "$f" "$dir/$(basename "$v")-$(basename "$f")"; done
        done ;;
    esac
    # Nesting one level deeper than Foundation's JSON decoder accepts (512): it has trapped on it.
    # The same depth in UTF-16LE, which the decoder also reads, after a character whose bytes
    # hold a quote (U+2200: 00 22), which hid the brackets from a count of the bytes as given.
    if target_decodes_json "$target"; then
        printf '%.0s[' {1..513} >"$dir/json-nesting-513"
        { printf '[\0"\0\0""\0,\0'; printf '%.0s[\0' {1..512}; } >"$dir/json-nesting-513-utf16"
    fi
    # Each target writes the rest of its seeds itself (the library's own encoders, RFC examples).
    CREDVAULT_FUZZ_SEEDS="$dir" "fuzz-out/bin/$target" -runs=0 >/dev/null 2>&1
}
