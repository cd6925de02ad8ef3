"""Whole-process lookups a shell script would run instead of `credvault lookup`: Python
keyring's command line (`python -m keyring get`, keyrings.alt plaintext file backend), and
`/bin/true` as the cost of starting any process from here."""

import os
import subprocess
import sys

from keyrings.alt.file import PlaintextKeyring

from file_peers import VALUE
from timing import measure, progress


def run(out, directory, quick):
    progress("== whole-process lookups")
    environment = dict(os.environ, XDG_DATA_HOME=os.path.join(directory, "data"),
                       PYTHON_KEYRING_BACKEND="keyrings.alt.file.PlaintextKeyring")
    keyring = PlaintextKeyring()
    keyring.file_path = os.path.join(environment["XDG_DATA_HOME"], "python_keyring", "keyring_pass.cfg")
    os.makedirs(os.path.dirname(keyring.file_path), exist_ok=True)
    keyring.set_password("api.example.com", "deploy", VALUE)

    def python_keyring_get():
        found = subprocess.run([sys.executable, "-m", "keyring", "get", "api.example.com", "deploy"],
                               env=environment, check=True, capture_output=True).stdout
        assert found.strip() == VALUE.encode()

    def spawn_true():
        subprocess.run(["/bin/true"], check=True)

    runs = 5 if quick else 21
    out.figure("Python keyring CLI (plaintext file)", "cli_lookup", measure(python_keyring_get, runs, warmup=2), items=1)
    out.figure("subprocess from Python", "process_spawn", measure(spawn_true, runs, warmup=2))
