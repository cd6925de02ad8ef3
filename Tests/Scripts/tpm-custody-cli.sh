#!/usr/bin/env bash
# TPM custody through the real `credvault` CLI against private software TPMs:
#   tpm-custody-cli.sh CREDVAULT SCRATCH_DIR
# A vault made under TPM custody with a device-only credential; the TPM restarted on its state
# (the counter survives); an older copy refused (13) and accepted on purpose; passwd and rotate
# keep custody; a copy of the state directory and vault on another TPM (a second swtpm) or none
# opens nothing device-only; the file alone is never used; a device-key vault after a TPM clear
# is reported as a key the TPM no longer holds. Prints `NAME STATUS` per step.
set -u
cli=$1
scratch=$2
repo=$(cd "$(dirname "$0")/../.." && pwd)
export XDG_STATE_HOME="$scratch/state" HOME="$scratch/home" TSS2_LOG=all+NONE
mkdir -p -m 700 "$XDG_STATE_HOME" "$HOME" "$scratch/vaults"
vault="$scratch/vaults/v.cvault"
printf 'tpm custody passphrase' >"$scratch/pass"; chmod 600 "$scratch/pass"
printf 'tpm custody passphrase 2' >"$scratch/pass2"; chmod 600 "$scratch/pass2"
common=(--vault "$vault" --passphrase-file "$scratch/pass")
common2=(--vault "$vault" --passphrase-file "$scratch/pass2")

start_tpm() { # start_tpm VAR [STATE_DIR]: exports TPM_TCTI; remembers the dir in VAR
    local env
    env=$(TMPDIR="$scratch" "$repo/scripts/tpm/swtpm-start.sh" ${2:+--state "$2"}) || return 1
    eval "$env"
    printf -v "$1" '%s' "$SWTPM_DIR"
    export CREDVAULT_TPM_TCTI="$TPM_TCTI"
}
stop_tpm() { "$repo/scripts/tpm/swtpm-stop.sh" ${2:-} "$1" >/dev/null 2>&1; }
step() { local name=$1; shift; "$@" >"$scratch/out" 2>"$scratch/err"; echo "$name $?"; }
q() { printf '%q ' "$@"; }

start_tpm first || { echo "swtpm 1"; exit 0; }
trap 'stop_tpm "$first"; [ -n "${second:-}" ] && stop_tpm "$second"' EXIT

step init "$cli" init "${common[@]}" --custody tpm --kdf insecure-testing-only
step info-custody sh -c "$(q "$cli" info "${common[@]}") | grep -q '^custody: TPM 2.0'"
step store-device sh -c "printf device-value | $(q "$cli" store "${common[@]}" app device)"
step store-token sh -c "printf old-token | $(q "$cli" store "${common[@]}" --portable app token)"
cp -p "$vault" "$scratch/older"
step store-newer sh -c "printf new-token | $(q "$cli" store "${common[@]}" --portable app token)"
# The TPM "reboots" on its state: the blob and the NV counter survive.
stop_tpm "$first" --keep; start_tpm first "$first"
step lookup-after-restart sh -c "$(q "$cli" lookup "${common[@]}" app device) | grep -qx device-value"
cp -p "$vault" "$scratch/newest"
cp -p "$scratch/older" "$vault"
step lookup-older-copy "$cli" lookup "${common[@]}" app token
step accept-restore "$cli" accept-restore "${common[@]}"
step lookup-restored sh -c "$(q "$cli" lookup "${common[@]}" app token) | grep -qx old-token"
cp -p "$scratch/newest" "$vault"
step lookup-replaced-newest "$cli" lookup "${common[@]}" app token
cp -p "$scratch/older" "$vault"; "$cli" accept-restore "${common[@]}" >/dev/null 2>&1
step passwd "$cli" passwd "${common[@]}" --new-passphrase-file "$scratch/pass2" --kdf insecure-testing-only
step rotate "$cli" rotate "${common2[@]}"
step lookup-after-rotate sh -c "$(q "$cli" lookup "${common2[@]}" app device) | grep -qx device-value"
# Another machine's TPM with a copy of everything the user has ($HOME, the state directory).
start_tpm second
step another-tpm-counter "$cli" lookup "${common2[@]}" app device
step another-tpm-accept "$cli" accept-restore "${common2[@]}"
step another-tpm-device "$cli" lookup "${common2[@]}" app device
step another-tpm-portable sh -c "$(q "$cli" lookup "${common2[@]}" app token) | grep -qx old-token"
# A device-key vault (its own state directory) on the second TPM, which is then cleared.
cleared=(env XDG_STATE_HOME="$scratch/state-cleared" "$cli")
mkdir -p -m 700 "$scratch/state-cleared"
device=(--vault "$scratch/vaults/device.cvault" --device)
step cleared-init "${cleared[@]}" init "${device[@]}" --custody tpm
step cleared-store sh -c "printf v | $(q "${cleared[@]}" store "${device[@]}" app key)"
TPM2TOOLS_TCTI="$CREDVAULT_TPM_TCTI" tpm2_clear >/dev/null 2>&1
step cleared-lookup "${cleared[@]}" lookup "${device[@]}" app key
cp "$scratch/err" "$scratch/cleared-err"
step cleared-message grep -q "the TPM no longer holds the key" "$scratch/cleared-err"
export CREDVAULT_TPM_TCTI="swtpm:path=$scratch/no-such-socket"
step no-tpm-device "$cli" lookup "${common2[@]}" app device
exit 0
