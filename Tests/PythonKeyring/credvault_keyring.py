"""A Python keyring backend that keeps its passwords with credvault, the command-line tool of
CredentialVault: each call runs `credvault store|lookup|delete -- SERVICE USERNAME`.

It is how the project runs Python keyring's own backend suite (keyring.testing.backend,
BackendBasicTests) against credvault's backends, names with white space, punctuation and
control characters included. Configuration, from the environment:

  CREDVAULT_KEYRING_COMMAND  the credvault executable (credvault-full beside it)
  CREDVAULT_KEYRING_OPTIONS  credvault's common options, split as a shell splits them, e.g.
                             "--backend file --vault /tmp/t.cvault --key-file /tmp/t.key"

Passwords are UTF-8 text, given to credvault on stdin and read from its stdout; names are
command-line arguments after `--`, so a name that starts with `-` is a name.
"""

import os
import shlex
import subprocess

from keyring import errors
from keyring.backend import KeyringBackend

NOT_FOUND = 1  # credvault's exit code for a credential that is not there


class CredvaultKeyring(KeyringBackend):
    """Passwords kept by credvault, on the backend its options choose."""

    priority = 1

    def _run(self, action, service, username, stdin=b""):
        command = [os.environ["CREDVAULT_KEYRING_COMMAND"], action]
        command += shlex.split(os.environ.get("CREDVAULT_KEYRING_OPTIONS", ""))
        command += ["--", service, username]
        return subprocess.run(command, input=stdin, capture_output=True, timeout=120, check=False)

    @staticmethod
    def _reason(outcome):
        return outcome.stderr.decode("utf-8", "replace").strip()

    def get_password(self, service, username):
        outcome = self._run("lookup", service, username)
        if outcome.returncode == NOT_FOUND:
            return None
        if outcome.returncode != 0:
            raise errors.KeyringError(self._reason(outcome))
        return outcome.stdout.decode("utf-8")

    def set_password(self, service, username, password):
        outcome = self._run("store", service, username, password.encode("utf-8"))
        if outcome.returncode != 0:
            raise errors.PasswordSetError(self._reason(outcome))

    def delete_password(self, service, username):
        outcome = self._run("delete", service, username)
        if outcome.returncode == NOT_FOUND:
            raise errors.PasswordDeleteError("Password not found")
        if outcome.returncode != 0:
            raise errors.PasswordDeleteError(self._reason(outcome))
