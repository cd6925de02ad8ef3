"""The Secret Service from Python and the shell: Python keyring's SecretService backend
(secretstorage over jeepney; it opens a new D-Bus connection for every call) and libsecret's
secret-tool (a whole process per call), on the default collection filled to each item count.

Only run inside a private keyring (scripts/with-keyring.sh sets CREDVAULT_TEST_KEYRING) unless
asked otherwise: it writes
thousands of items."""

import subprocess

import secretstorage
from keyring.backends.SecretService import Keyring

from file_peers import VALUE, credential, keyring_operations
from timing import measure, progress


def reachable():
    """True when an unlocked default collection answers (never prompts)."""
    try:
        connection = secretstorage.dbus_init()
        try:
            return not secretstorage.get_default_collection(connection).is_locked()
        finally:
            connection.close()
    except Exception as error:  # no bus, no provider, no default collection
        progress(f"   no Secret Service: {error}")
        return False


def run(out, counts, quick):
    progress("== Python keyring (SecretService) and secret-tool")
    connection = secretstorage.dbus_init()
    collection = secretstorage.get_default_collection(connection)
    keyring = Keyring()
    filled = 0
    for count in counts:
        while filled < count:
            service, user = credential(filled)
            attributes = {"service": service, "username": user, "application": "Python keyring library"}
            collection.create_item(f"Password for '{user}' on '{service}'", attributes, VALUE.encode(), replace=True)
            filled += 1
        hot = sorted({0, count // 2, count - 1})
        pick, save, load = keyring_operations(keyring, hot)

        def tool_store():
            service, user = pick()
            subprocess.run(
                ["secret-tool", "store", "--label=bench", "service", service, "username", user],
                input=VALUE.encode(), check=True, stdout=subprocess.DEVNULL)

        def tool_lookup():
            service, user = pick()
            found = subprocess.run(["secret-tool", "lookup", "service", service, "username", user],
                                   check=True, capture_output=True).stdout
            assert found == VALUE.encode()

        runs = 5 if quick else 21
        out.figure("Python keyring (SecretService)", "secret_service_store", measure(save, runs, warmup=2), items=count)
        out.figure("Python keyring (SecretService)", "secret_service_lookup", measure(load, runs, warmup=2), items=count)
        out.figure("secret-tool (process)", "secret_service_store", measure(tool_store, runs, warmup=2), items=count)
        out.figure("secret-tool (process)", "secret_service_lookup", measure(tool_lookup, runs, warmup=2), items=count)
    connection.close()
