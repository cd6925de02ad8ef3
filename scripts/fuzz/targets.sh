# Sourced by build.sh and run.sh: the fuzz targets, their sources, flags and seeds.
# A target whose module has not landed yet is simply not available.

available_targets() {
    local t
    for t in sealed-file jose redirect-url; do
        target_sources "$t" >/dev/null 2>&1 && echo "$t"
    done
    return 0
}

target_sources() {
    case "$1" in
    sealed-file)
        echo Fuzz/SealedFile/*.swift $(find Sources/CredentialVault -name '*.swift' | sort) ;;
    jose)
        [ -d Sources/CredentialVaultAuth/JOSE ] && [ -d Fuzz/JOSE ] || return 1
        echo Fuzz/JOSE/*.swift $(find Sources/CredentialVaultAuth/JOSE -name '*.swift' | sort) ;;
    redirect-url)
        [ -d Sources/CredentialVaultAuth/Redirect ] && [ -d Fuzz/RedirectURL ] || return 1
        echo Fuzz/RedirectURL/*.swift $(redirect_sources) ;;
    *) return 1 ;;
    esac
}

target_flags() {
    case "$1" in
    sealed-file) echo "-I Sources/CSodium -lsodium" ;;
    jose) echo "-I Sources/CSodium -I Sources/COpenSSL -lsodium -lcrypto" ;;
    redirect-url) echo "-I Sources/CSodium -lsodium" ;;
    esac
}

target_seeds() {
    local target=$1 dir=$2
    case "$target" in
    sealed-file)
        cp Tests/CredentialVaultTests/Fixtures/v1/*.cvault "$dir/"
        CREDVAULT_FUZZ_SEEDS="$dir" "fuzz-out/bin/$target" -runs=0 >/dev/null 2>&1 ;;
    *)
        [ -d "Fuzz/Seeds/$target" ] && cp "Fuzz/Seeds/$target"/* "$dir/"
        CREDVAULT_FUZZ_SEEDS="$dir" "fuzz-out/bin/$target" -runs=0 >/dev/null 2>&1 || true ;;
    esac
}

redirect_sources() { :; }
