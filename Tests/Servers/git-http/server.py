#!/usr/bin/env python3
"""git http-backend behind HTTP Basic authentication, on 127.0.0.1, for the git credential-helper
tests (Tests/CredentialVaultTests/GitCloneTests.swift).

Usage: server.py ROOT USER PASSWORD_FILE LOG
Serves the repositories under ROOT (git's smart HTTP protocol) to USER with the password in
PASSWORD_FILE, read at every request (the test changes it to reject a stored credential). Prints
PORT=N once listening, appends one line per authentication attempt to LOG ("USER ok" or "USER
rejected"; never the password), and exits when its stdin closes (the test went away).
"""
import base64
import hmac
import http.server
import os
import subprocess
import sys
import threading

root, user, password_file, log_path = sys.argv[1:5]


def log(line):
    with open(log_path, "a") as f:
        f.write(line + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.serve()

    def do_POST(self):
        self.serve()

    def authorized(self):
        header = self.headers.get("Authorization", "")
        if not header.startswith("Basic "):
            return False
        try:
            name, _, password = base64.b64decode(header[6:], validate=True).decode().partition(":")
        except ValueError:
            log("malformed rejected")
            return False
        with open(password_file) as f:
            expected = f.read().strip()
        ok = name == user and hmac.compare_digest(password.encode(), expected.encode())
        log("%s %s" % (name, "ok" if ok else "rejected"))
        return ok

    def serve(self):
        if not self.authorized():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="credvault test"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_USER": user,
            "REMOTE_ADDR": "127.0.0.1",
        }
        for header, variable in (("Content-Encoding", "HTTP_CONTENT_ENCODING"), ("Git-Protocol", "GIT_PROTOCOL")):
            if self.headers.get(header):
                env[variable] = self.headers[header]
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60).stdout
        separator = b"\r\n\r\n" if b"\r\n\r\n" in out else b"\n\n"
        head, _, payload = out.partition(separator)
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            name, _, value = line.partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def exit_when_stdin_closes():
    sys.stdin.read()
    os._exit(0)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
print("PORT=%d" % server.server_address[1], flush=True)
server.serve_forever()
