"""File keyrings from PyPI, at the item counts credvault-bench uses: keyrings.alt's
PlaintextKeyring (no encryption) and EncryptedKeyring (PBKDF2 + AES-CFB per value), and
keyrings.cryptfile's CryptFileKeyring (Argon2id t=15, 64 MiB, per value + AES-GCM).

All three keep an INI file that every get re-reads and parses and every set re-reads, parses
and rewrites in place (open(path, 'w'): not atomic, no fsync). Vaults are filled by writing
the INI file once with the keyring's own encoding (filler values reuse one encrypted blob, so
that a 10,000-item cryptfile vault does not take 10,000 Argon2 runs); the measured keys hold
values encrypted for them."""

import configparser
import os

from keyrings.alt.escape import escape
from keyrings.alt.file import EncryptedKeyring, PlaintextKeyring
from keyrings.alt.file_base import encodebytes
from keyrings.cryptfile.cryptfile import CryptFileKeyring

from timing import measure, progress

VALUE = "v" * 128
KEYRINGS = [
    ("keyrings.alt plaintext", PlaintextKeyring, 15),
    ("keyrings.alt encrypted", EncryptedKeyring, 15),
    ("keyrings.cryptfile", CryptFileKeyring, 3),
]


def keyring_operations(keyring, hot):
    """save() and load() callables for a Python keyring, cycling over the `hot` indexes."""
    turn = {"next": 0}

    def pick():
        turn["next"] = (turn["next"] + 1) % len(hot)
        return credential(hot[turn["next"]])

    def save():
        service, user = pick()
        keyring.set_password(service, user, VALUE)

    def load():
        service, user = pick()
        assert keyring.get_password(service, user) == VALUE

    return pick, save, load


def credential(index):
    """The same names credvault-bench uses."""
    return f"svc-{index % 16}.example.com", f"account-{index}"


def fill(keyring, count, hot):
    """Writes a keyring file of `count` credentials in one go; `hot` ones get real values."""
    config = configparser.RawConfigParser()
    filler = None
    for index in range(count):
        service, user = credential(index)
        if index in hot or filler is None:
            blob = keyring.encrypt(VALUE.encode(), keyring._generate_assoc(service, user))
            if index not in hot:
                filler = blob
        else:
            blob = filler
        section = escape(service)
        if not config.has_section(section):
            config.add_section(section)
        config.set(section, escape(user), "\n" + encodebytes(blob).decode())
    with open(keyring.file_path, "w", encoding="utf-8") as stream:
        config.write(stream)
    os.chmod(keyring.file_path, 0o600)


def run(out, directory, counts, quick):
    for tool, cls, runs in KEYRINGS:
        progress(f"== {tool}")
        for count in counts:
            keyring = cls()
            keyring.file_path = os.path.join(directory, f"{cls.__name__}-{count}.cfg")
            keyring.keyring_key = "correct horse battery staple"
            hot = sorted({0, count // 3, count // 2, (2 * count) // 3, count - 1})
            fill(keyring, count, set(hot))
            pick, save, load = keyring_operations(keyring, hot)

            n = 1 if quick and runs < 10 else (5 if quick else runs)
            size = os.path.getsize(keyring.file_path)
            out.figure(tool, "file_save", measure(save, n, warmup=1), items=count, file_bytes=size)
            out.figure(tool, "file_load", measure(load, n, warmup=1), items=count, file_bytes=size)
