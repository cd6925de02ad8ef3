# Starts kwalletd5 as pam_kwallet5 does: "--pam-login <pipe fd> <socket fd>", the 56-byte hash
# written on the pipe, the environment (DBUS_SESSION_BUS_ADDRESS) sent over the unix socket named
# by PAM_KWALLET5_LOGIN. Writes kwalletd5's PID to argv[3], then stays its parent until it exits
# (so that it is reaped, never left as a zombie).
import os, socket, sys, tempfile
with open(sys.argv[1]) as f:
    hash_bytes = bytes.fromhex(f.read().strip())
log, pidfile = sys.argv[2], sys.argv[3]
assert len(hash_bytes) == 56
r, w = os.pipe()
d = tempfile.mkdtemp(dir=os.environ["XDG_RUNTIME_DIR"])
path = os.path.join(d, "env.sock")
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); srv.bind(path); srv.listen(1)
logfd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
pid = os.fork()
if pid == 0:
    os.dup2(logfd, 1); os.dup2(logfd, 2); os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.set_inheritable(r, True); os.set_inheritable(srv.fileno(), True)
    os.execvpe("kwalletd5", ["kwalletd5", "--pam-login", str(r), str(srv.fileno())],
               dict(os.environ, PAM_KWALLET5_LOGIN=path))
os.close(r); srv.close()
os.write(w, hash_bytes); os.close(w)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect(path)
c.sendall(("DBUS_SESSION_BUS_ADDRESS=%s\n" % os.environ["DBUS_SESSION_BUS_ADDRESS"]).encode()); c.close()
os.unlink(path); os.rmdir(d)
with open(pidfile + ".tmp", "w") as f:
    f.write("%d\n" % pid)
os.rename(pidfile + ".tmp", pidfile)
os.waitpid(pid, 0)
