#!/usr/bin/env bash
# Builds the libFuzzer targets with swiftc directly (SwiftPM cannot link -sanitize=fuzzer
# executables): each target is compiled into one module together with the sources it fuzzes,
# so that internal parsers are reachable. Binaries go to fuzz-out/bin/, seed corpora to
# fuzz-out/seeds/TARGET/ (from the golden fixtures and the library's own encoders).
# Targets: sealed-file (Fuzz/SealedFile), jose (Fuzz/JOSE), redirect-url (Fuzz/RedirectURL),
# provider-responses (Fuzz/ProviderResponses); all but sealed-file are compiled with the auth
# module's sources and link CredentialVault built apart.
# Usage: scripts/fuzz/build.sh [TARGET...]   (default: every available target)
set -euo pipefail
cd "$(dirname "$0")/../.."
scripts/install-deps.sh core
source scripts/fuzz/targets.sh
mkdir -p fuzz-out/bin
targets=("$@")
((${#targets[@]})) || targets=($(available_targets))
# -package-name: the library uses `package` access between its modules, as SwiftPM builds it.
flags=(-sanitize=fuzzer,address -parse-as-library -swift-version 6 -O -g -package-name CredentialVault)
quiet() { grep -vE 'prohibited flag|Cannot export local symbol' || true; }
vault_module_built=0
for target in "${targets[@]}"; do
    if needs_vault_module "$target" && ((vault_module_built == 0)); then
        # The auth module imports CredentialVault: build it once as a module + object.
        echo "fuzz: building the CredentialVault module" >&2
        mkdir -p fuzz-out/modules fuzz-out/obj
        swiftc "${flags[@]}" -wmo -module-name CredentialVault -I Sources/CSodium -I Sources/CKeyctl \
            -emit-module -emit-module-path fuzz-out/modules/CredentialVault.swiftmodule \
            -c -o fuzz-out/obj/CredentialVault.o $(find Sources/CredentialVault -name '*.swift' | sort) 2>&1 | quiet
        [ -f fuzz-out/obj/CredentialVault.o ] || { echo "fuzz: build of the CredentialVault module failed" >&2; exit 1; }
        vault_module_built=1
    fi
    sources=$(target_sources "$target") || { echo "fuzz: unknown or unavailable target $target" >&2; exit 2; }
    echo "fuzz: building $target" >&2
    start=$SECONDS
    rm -f "fuzz-out/bin/$target"
    # shellcheck disable=SC2086
    swiftc "${flags[@]}" -module-name "Fuzz_${target//-/_}" $(target_flags "$target") $sources \
        -o "fuzz-out/bin/$target" 2>&1 | quiet
    [ -x "fuzz-out/bin/$target" ] || { echo "fuzz: build of $target failed" >&2; exit 1; }
    seeds="fuzz-out/seeds/$target"
    rm -rf "$seeds" && mkdir -p "$seeds"
    target_seeds "$target" "$seeds" || { echo "fuzz: writing the seeds of $target failed" >&2; exit 1; }
    echo "fuzz: $target built in $((SECONDS - start)) s, $(ls "$seeds" | wc -l) seeds" >&2
done
