#!/usr/bin/env python3
"""An independent reader of the sealed-file vault format 1.0, written from docs/FORMAT.md alone.

It shares no code with the library: if FORMAT.md and the library drift apart, it stops reading
the golden fixtures (GoldenFixtureTests runs it on each of them). Crypto is libsodium's, through
ctypes (libsodium.so.23, which the library needs anyway); nothing else is needed.

    format-reader.py VAULT [--passphrase-file F | --key-file F]
                     [--host-secret F --machine-id ID] [--held F] [--counters DIR]

--held is the custodian's device secret (custody 1 and 2), --counters the directory of counter
files (custody 0, flag 1). Prints one JSON object: the header's summary, the commit chosen, the
counter check and every credential (values in hex, times in Unix ms). A refusal prints
{"error": KIND, "message": ...} and exits 2, KIND being the library's error case.
"""
import argparse
import ctypes
import hmac
import json
import os
import struct
import sys
import time

sodium = ctypes.CDLL("libsodium.so.23")
if sodium.sodium_init() < 0:
    sys.exit("libsodium did not initialise")


class Refused(Exception):
    """A vault this reader refuses, with the library's error case."""

    def __init__(self, kind, message):
        super().__init__(message)
        self.kind = kind


# Primitives (FORMAT.md, *Primitives*)

def H(key, message):
    out = ctypes.create_string_buffer(32)
    key = key or b""
    if sodium.crypto_generichash(out, ctypes.c_size_t(32), message, ctypes.c_ulonglong(len(message)),
                                 key or None, ctypes.c_size_t(len(key))) != 0:
        raise RuntimeError("crypto_generichash failed")
    return out.raw


def Sub(key, subkey_id, context):
    out = ctypes.create_string_buffer(32)
    if sodium.crypto_kdf_derive_from_key(out, ctypes.c_size_t(32), ctypes.c_uint64(subkey_id), context, key) != 0:
        raise RuntimeError("crypto_kdf_derive_from_key failed")
    return out.raw


def kdf_pw(passphrase, salt, opslimit, memlimit):
    out = ctypes.create_string_buffer(32)
    alg = sodium.crypto_pwhash_alg_argon2id13()
    if sodium.crypto_pwhash(out, ctypes.c_ulonglong(32), passphrase, ctypes.c_ulonglong(len(passphrase)), salt,
                            ctypes.c_ulonglong(opslimit), ctypes.c_size_t(memlimit), ctypes.c_int(alg)) != 0:
        raise Refused("corrupted", "Argon2id refused the parameters")
    return out.raw


def open_box(key, ad, box):
    """AEAD-open of nonce(24) || ciphertext || tag(16); None when it does not authenticate."""
    if len(box) < 40:
        return None
    nonce, sealed = box[:24], box[24:]
    out = ctypes.create_string_buffer(len(sealed) - 16 or 1)
    length = ctypes.c_ulonglong(0)
    if sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(out, ctypes.byref(length), None, sealed,
                                                          ctypes.c_ulonglong(len(sealed)), ad,
                                                          ctypes.c_ulonglong(len(ad)), nonce, key) != 0:
        return None
    return out.raw[:length.value]


def u(fmt, data, offset):
    return struct.unpack_from("<" + fmt, data, offset)


# Header (FORMAT.md, *Header*), checked in the documented order before any key derivation

HEADER_SIZE, MINIMUM_SIZE, SNAPSHOT_OFFSET, MAXIMUM_SIZE = 156, 12320, 12288, 1 << 30
COMMIT_OFFSETS = (4096, 8192)


def parse_header(data):
    if len(data) < 8:
        raise Refused("corrupted", "file too short to be a vault")
    if data[:8] != b"CRDVAULT":
        raise Refused("corrupted", "not a CredentialVault file")
    if len(data) < 12:
        raise Refused("corrupted", "truncated header")
    major, minor = u("HH", data, 8)
    if major != 1:
        raise Refused("unsupported", f"vault format {major}.{minor}")
    if len(data) < 20:
        raise Refused("corrupted", "truncated header")
    incompatible, compatible = u("II", data, 12)
    if incompatible:
        raise Refused("unsupported", f"features 0x{incompatible:x} of a newer format")
    if len(data) < HEADER_SIZE:
        raise Refused("corrupted", "truncated header")
    h = dict(major=major, minor=minor, compatible=compatible, vault_id=data[20:36], source=data[36], kdf=data[37],
             custody=data[38], flags=data[39], salt=data[56:72], wrapped=data[72:144], raw=data[:HEADER_SIZE])
    h["opslimit"], h["memlimit"] = u("QQ", data, 40)
    h["generation"], = u("Q", data, 144)
    h["record_count"], = u("I", data, 152)
    if h["source"] not in (1, 2, 3) or h["kdf"] not in (0, 1):
        raise Refused("corrupted", "unknown key source or KDF")
    if h["flags"] & ~1:
        raise Refused("corrupted", "unknown header flags")
    if h["custody"] not in (0, 1, 2):
        raise Refused("unsupported", "unknown custodian")
    if h["source"] == 1:
        if h["kdf"] != 1 or not 1 <= h["opslimit"] <= 4 or not 8192 <= h["memlimit"] <= 1 << 30 or h["memlimit"] % 1024:
            raise Refused("corrupted", "KDF parameters")
    elif h["kdf"] != 0 or h["opslimit"] or h["memlimit"]:
        raise Refused("corrupted", "KDF parameters for a key that takes none")
    if len(data) < MINIMUM_SIZE:
        raise Refused("corrupted", "truncated file")
    if len(data) > MAXIMUM_SIZE:
        raise Refused("corrupted", "larger than 1 GiB")
    return h


# Keys (FORMAT.md, *Keys*)

def device_master(custody, host_secret, machine_id, held):
    if custody == 0:
        return H(host_secret, b"CredentialVault device key v1\0" + machine_id)
    return H(host_secret, b"CredentialVault device key v2\0" + bytes([custody]) + held + machine_id)


def key_encryption_key(h, secret, master):
    if h["source"] == 1:
        return kdf_pw(secret, h["salt"], h["opslimit"], h["memlimit"])
    if h["source"] == 2:
        return H(None, b"CredentialVault key file v1\0" + h["salt"] + secret)
    if master is None:
        raise Refused("notAvailable", "a device-key vault needs the host secret and machine id")
    return H(Sub(master, 1, b"CVDEVKEK"), h["salt"])


# Records, snapshot, journal and commit records

class Vault:
    def __init__(self, data, secret, master):
        self.data, self.h = data, parse_header(data)
        for start, end in ((HEADER_SIZE, 4096), (4096 + 96, 8192), (8192 + 96, SNAPSHOT_OFFSET)):
            if any(data[start:end]):
                raise Refused("corrupted", "damaged padding")
        data_key = open_box(key_encryption_key(self.h, secret, master), data[:72], self.h["wrapped"])
        if data_key is None:
            raise Refused("deviceMismatch" if self.h["source"] == 3 else "wrongPassphrase", "the data key does not unwrap")
        self.record_key, self.mac_key = Sub(data_key, 1, b"CVRECORD"), Sub(data_key, 2, b"CVFILMAC")
        self.device_key = H(Sub(master, 2, b"CVDEVREC"), self.h["vault_id"]) if master else None

    @staticmethod
    def split_record(data, offset, end):
        """length:u32 || record_id(16) || box; returns (next offset, framed prefix, id, box)."""
        if offset + 4 > end:
            raise Refused("corrupted", "malformed record")
        length, = u("I", data, offset)
        if length < 16 + 40 or offset + 4 + length > end:
            raise Refused("corrupted", "malformed record")
        return offset + 4 + length, data[offset:offset + 4], data[offset + 4:offset + 20], data[offset + 20:offset + 4 + length]

    def open_record(self, record_id, box):
        vault_id = self.h["vault_id"]
        plain = open_box(self.record_key, b"CVREC" + struct.pack("<H", 1) + vault_id + record_id, box)
        if plain is None:
            raise Refused("tampered", "a record does not open")
        if len(plain) % 64 or len(plain) < 25:
            raise Refused("corrupted", "malformed record")
        flags = plain[0]
        expires, created, modified = u("QQQ", plain, 1)
        position = 25

        def take(size):
            nonlocal position
            if position + size > len(plain):
                raise Refused("corrupted", "malformed record")
            position += size
            return plain[position - size:position]

        def str16():
            raw = take(u("H", take(2), 0)[0])
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise Refused("corrupted", "a name is not UTF-8")
            if len(raw) > 4096 or "\0" in text:
                raise Refused("corrupted", "a name breaks the name rules")
            return text

        service, account = str16(), str16()
        label = str16() if flags & 4 else None
        value = take(u("I", take(4), 0)[0])
        if (flags & ~7 or bool(flags & 2) != bool(expires) or not service
                or len(plain) - position >= 64 or any(plain[position:])):
            raise Refused("corrupted", "malformed record")
        if flags & 1:
            opened = open_box(self.device_key, b"CVDEV" + vault_id + record_id, value) if self.device_key else None
            value = opened  # None: deviceMismatch when read
        return dict(id=record_id, service=service, account=account, label=label, device_only=bool(flags & 1),
                    value=value, expires_ms=expires, created_ms=created or None, modified_ms=modified)

    def entry_at(self, offset, chain, limit):
        """(next offset, chain, body) of a whole entry that chains, else None."""
        if offset + 4 > limit:
            return None
        length, = u("I", self.data, offset)
        if length < 1 or offset + 4 + length + 32 > limit:
            return None
        framed = self.data[offset:offset + 4 + length]
        after = H(self.mac_key, b"CRDVAULT journal" + chain + framed)
        if not hmac.compare_digest(after, self.data[offset + 4 + length:offset + 4 + length + 32]):
            return None
        return offset + 4 + length + 32, after, framed[4:]

    def apply(self, table, body):
        at = 0
        while at < len(body):
            op, at = body[at], at + 1
            if op == 1:
                at, _, record_id, box = self.split_record(body, at, len(body))
                record = self.open_record(record_id, box)
                holder = next((k for k, r in table.items() if r["id"] == record_id), None)
                if holder is not None and holder != (record["service"], record["account"]):
                    raise Refused("corrupted", "the journal reuses another record's id")
                table[(record["service"], record["account"])] = record
            elif op == 2 and at + 16 <= len(body):
                record_id, at = body[at:at + 16], at + 16
                holder = next((k for k, r in table.items() if r["id"] == record_id), None)
                if holder is None:
                    raise Refused("corrupted", "the journal deletes a record the vault does not hold")
                del table[holder]
            else:
                raise Refused("corrupted", "malformed journal entry")

    def read(self):
        data, h = self.data, self.h
        offset, mac_input, table = SNAPSHOT_OFFSET, [b"CRDVAULT snapshot", h["raw"]], {}
        if h["record_count"] > (len(data) - offset) // (4 + 16 + 40):
            raise Refused("corrupted", "record count exceeds the file size")
        for _ in range(h["record_count"]):
            offset, length, record_id, box = self.split_record(data, offset, len(data))
            mac_input += [length, record_id, box[:24], box[-16:]]
            record = self.open_record(record_id, box)
            key = (record["service"], record["account"])
            if key in table or any(r["id"] == record_id for r in table.values()):
                raise Refused("corrupted", "duplicate record")
            table[key] = record
        if offset + 32 > len(data):
            raise Refused("corrupted", "malformed record table")
        snapshot_mac = H(self.mac_key, b"".join(mac_input))
        if not hmac.compare_digest(snapshot_mac, data[offset:offset + 32]):
            raise Refused("tampered", "snapshot MAC")
        snapshot_end = offset + 32

        commits = []
        for slot, at in enumerate(COMMIT_OFFSETS):
            record = data[at:at + 96]
            if hmac.compare_digest(H(self.mac_key, b"CRDVAULT commit" + bytes([slot]) + record[:64]), record[64:]):
                generation, journal_end, count, reference, counter = u("QQIIQ", record, 0)
                commits.append(dict(generation=generation, journal_end=journal_end, record_count=count,
                                    counter_ref=reference, counter=counter, chain=record[32:64]))
            else:
                commits.append(None)  # damaged
        intact = [c for c in commits if c]
        if not intact:
            raise Refused("tampered", "both commit records damaged")
        newest = max(intact, key=lambda c: c["generation"])
        older = min(intact, key=lambda c: c["generation"]) if len(intact) == 2 else None
        if older and older["generation"] == newest["generation"]:
            if not all(c["journal_end"] == snapshot_end and c["generation"] == h["generation"] and c["chain"] == snapshot_mac
                       and c["record_count"] == h["record_count"] for c in intact):
                raise Refused("tampered", "one generation twice, not the snapshot's")
            older = None
        elif older and newest["generation"] - older["generation"] != 1:
            raise Refused("tampered", "commit records not one generation apart")
        if newest["journal_end"] < snapshot_end or newest["journal_end"] > len(data):
            raise Refused("corrupted", "truncated file: the journal ends before its last commit")

        # The journal up to the newest commit, passing the older commit's state exactly.
        end, generation, chain, passed = snapshot_end, h["generation"], snapshot_mac, older is None
        while True:
            if older and generation == older["generation"]:
                if end != older["journal_end"] or chain != older["chain"]:
                    raise Refused("tampered", "the older commit is not on the way to the newer")
                passed = True
            if end >= newest["journal_end"]:
                break
            entry = self.entry_at(end, chain, newest["journal_end"])
            if entry is None:
                raise Refused("tampered", "a committed entry does not chain")
            end, chain, body = entry
            generation += 1
            self.apply(table, body)
        if not passed or generation != newest["generation"] or chain != newest["chain"]:
            raise Refused("tampered", "the newest commit does not name the journal")
        if len(table) != newest["record_count"]:
            raise Refused("corrupted", "the record count does not match the journal")

        if h["flags"] & 1 and newest["counter_ref"] == 0:
            raise Refused("corrupted", "a vault with a rollback counter whose commit names none")
        counter, rolled = newest["counter"], False
        following = self.entry_at(end, chain, len(data))
        if len(intact) == 1:  # the other one torn while committing the entry after this one
            if following is None:
                raise Refused("tampered", "a damaged commit record and no entry to roll forward")
            end, chain, body = following
            self.apply(table, body)
            rolled, counter = True, counter + (1 if h["flags"] & 1 else 0)
            if self.entry_at(end, chain, len(data)):
                raise Refused("tampered", "an entry past a rolled-forward one")
        elif following and self.entry_at(following[0], following[1], len(data)):
            raise Refused("tampered", "two complete entries past the newest commit")
        return table, dict(generation=generation + rolled, rolled_forward=rolled, residue=len(data) - end,
                           counter_ref=newest["counter_ref"], counter=counter)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("vault")
    parser.add_argument("--passphrase-file")
    parser.add_argument("--key-file")
    parser.add_argument("--host-secret")
    parser.add_argument("--machine-id")
    parser.add_argument("--held")
    parser.add_argument("--counters")
    options = parser.parse_args()
    data = open(options.vault, "rb").read()
    try:
        header = parse_header(data)
        secret = None
        if header["source"] == 1:
            # FORMAT.md, *What the format takes from outside the file*: one trailing \n, then one \r.
            secret = open(options.passphrase_file, "rb").read()
            secret = secret[:-1] if secret.endswith(b"\n") else secret
            secret = secret[:-1] if secret.endswith(b"\r") else secret
        elif header["source"] == 2:
            secret = open(options.key_file, "rb").read()
        master = None
        if options.host_secret and options.machine_id is not None:
            held = open(options.held, "rb").read() if options.held else None
            if header["custody"] == 0 or held is not None:
                master = device_master(header["custody"], open(options.host_secret, "rb").read(),
                                       options.machine_id.strip().encode(), held)
        vault = Vault(data, secret, master)
        table, state = vault.read()
        summary = dict(format=f"{header['major']}.{header['minor']}", source=header["source"], custody=header["custody"],
                       rollback_counter=bool(header["flags"] & 1), vault_id=header["vault_id"].hex(), **state)
        if header["flags"] & 1 and header["custody"] == 0 and options.counters:
            name = f"{header['vault_id'].hex()}.{state['counter_ref']:08x}"
            path = os.path.join(options.counters, name)
            if not os.path.exists(path):
                raise Refused("rolledBack", "the counter file is missing")
            stored = open(path, "rb").read()
            if len(stored) != 8:
                raise Refused("io", "the counter file is damaged")
            value, = struct.unpack("<Q", stored)
            if state["counter"] not in (value, value + 1):
                raise Refused("rolledBack", f"the file carries {state['counter']}, the counter is at {value}")
            summary["counter_file"] = value
        summary["records"] = [
            dict(service=r["service"], account=r["account"], label=r["label"], device_only=r["device_only"],
                 value=None if r["value"] is None else r["value"].hex(), created_ms=r["created_ms"],
                 modified_ms=r["modified_ms"], expires_ms=r["expires_ms"])
            for _, r in sorted(table.items(), key=lambda item: (item[0][0].encode(), item[0][1].encode()))
            if not r["expires_ms"] or r["expires_ms"] > time.time() * 1000  # an expired record is never served
        ]
        print(json.dumps(summary, ensure_ascii=False))
    except Refused as refusal:
        print(json.dumps(dict(error=refusal.kind, message=str(refusal))))
        sys.exit(2)


if __name__ == "__main__":
    main()
