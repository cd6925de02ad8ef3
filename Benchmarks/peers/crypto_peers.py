"""Seal/open with PyNaCl's binding of the same libsodium AEAD (XChaCha20-Poly1305 IETF, random
24-byte nonce, nonce || ciphertext || tag), at the sizes credvault-bench uses."""

from nacl.bindings import (
    crypto_aead_xchacha20poly1305_ietf_decrypt as decrypt,
    crypto_aead_xchacha20poly1305_ietf_encrypt as encrypt,
)
from nacl.utils import random

from timing import measure, progress

SIZES = [32, 256, 4096, 65536, 1 << 20]


def run(out, quick):
    progress("== PyNaCl seal/open")
    key = random(32)
    for size in SIZES:
        message = random(size)

        def seal():
            nonce = random(24)
            return nonce + encrypt(message, None, nonce, key)

        box = seal()

        def open_box():
            return decrypt(box[24:], None, box[:24], key)

        runs = 7 if quick else 31
        out.figure("PyNaCl", "seal", measure(seal, runs, warmup=2, min_batch_ns=300_000), size_bytes=size)
        out.figure("PyNaCl", "open", measure(open_box, runs, warmup=2, min_batch_ns=300_000), size_bytes=size)
