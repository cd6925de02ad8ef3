"""Python keyring's own backend suite, unchanged, against credvault (see credvault_keyring)."""

from keyring.testing.backend import BackendBasicTests

from credvault_keyring import CredvaultKeyring


class TestCredvaultKeyring(BackendBasicTests):
    def init_keyring(self):
        return CredvaultKeyring()
