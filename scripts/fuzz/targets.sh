# Sourced by build.sh and run.sh: the fuzz targets, their sources, flags and seeds.
# A target whose module has not landed yet is simply not available.

available_targets() {
    local t
    for t in sealed-file jose redirect-url provider-responses; do
        target_sources "$t" >/dev/null 2>&1 && echo "$t"
    done
    return 0
}

auth_sources() { find Sources/CredentialVaultAuth -name '*.swift' | sort; }

target_sources() {
    case "$1" in
    sealed-file)
        echo Fuzz/SealedFile/*.swift $(find Sources/CredentialVault -name '*.swift' | sort) ;;
    jose)
        [ -d Sources/CredentialVaultAuth/JOSE ] && [ -d Fuzz/JOSE ] || return 1
        echo Fuzz/JOSE/*.swift Fuzz/Support/*.swift $(auth_sources) ;;
    redirect-url)
        [ -d Sources/CredentialVaultAuth/Redirect ] && [ -d Fuzz/RedirectURL ] || return 1
        echo Fuzz/RedirectURL/*.swift Fuzz/Support/*.swift $(auth_sources) ;;
    provider-responses)
        [ -d Sources/CredentialVaultAuth/HTTP ] && [ -d Fuzz/ProviderResponses ] || return 1
        echo Fuzz/ProviderResponses/*.swift Fuzz/Support/*.swift $(auth_sources) ;;
    *) return 1 ;;
    esac
}

# Whether the target links the CredentialVault module built apart (the auth module imports it).
needs_vault_module() { [ "$1" != sealed-file ]; }

target_flags() {
    case "$1" in
    sealed-file) echo "-I Sources/CSodium -I Sources/CKeyctl -lsodium" ;;
    *) echo "-I fuzz-out/modules -I Sources/CSodium -I Sources/CKeyctl -I Sources/COpenSSL -I Sources/CCurl fuzz-out/obj/CredentialVault.o -lsodium -lcrypto -lcurl" ;;
    esac
}

target_seeds() {
    local target=$1 dir=$2
    case "$target" in
    sealed-file)  # every format version's golden fixtures
        for v in Tests/CredentialVaultTests/Fixtures/v*/; do
            for f in "$v"*.cvault; do cp "$f" "$dir/$(basename "$v")-$(basename "$f")"; done
        done ;;
    esac
    # Each target writes the rest of its seeds itself (the library's own encoders, RFC examples).
    CREDVAULT_FUZZ_SEEDS="$dir" "fuzz-out/bin/$target" -runs=0 >/dev/null 2>&1
}
