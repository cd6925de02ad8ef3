#!/usr/bin/python3
# A relay in front of gnome-keyring's Secret portal backend that holds each answer back for a
# while, so that libsecret (secret-tool) inside the sandbox gets to hear it:
#
#   delayed-secret-backend.py BUS_NAME DELAY_MS
#
# Why: libsecret 0.20.5 listens for the portal Request's Response from the well-known name
# org.freedesktop.portal.Desktop, and Debian 12's GLib (with the fix of CVE-2024-34397) drops a
# signal from a well-known name until its own GetNameOwner call has returned. gnome-keyring
# answers RetrieveSecret at once, so the portal's Response often arrives first (more often the
# busier the machine) and secret-tool then waits forever: libsecret's race, not the sandbox's.
# xdg-desktop-portal emits the Response only when its backend call returns; holding that return
# back lets the GetNameOwner reply come first.
#
# It owns BUS_NAME on the session bus ($DBUS_SESSION_BUS_ADDRESS), serves
# org.freedesktop.impl.portal.Secret at /org/freedesktop/portal/desktop, forwards each
# RetrieveSecret unchanged (handle, app id, the caller's pipe, options) to org.freedesktop.secrets,
# and returns gnome-keyring's answer DELAY_MS milliseconds after it came. The secret itself goes
# from gnome-keyring into the pipe directly: the relay never sees it. Prints "ready" on stdout
# once it owns the name; exits on SIGTERM or when the bus goes away.
import os
import signal
import sys

import gi

gi.require_version("Gio", "2.0")
gi.require_version("GLib", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

PATH = "/org/freedesktop/portal/desktop"
INTERFACE = "org.freedesktop.impl.portal.Secret"
BACKEND = "org.freedesktop.secrets"
NODE = Gio.DBusNodeInfo.new_for_xml(f"""
<node><interface name="{INTERFACE}">
  <method name="RetrieveSecret">
    <arg type="o" name="handle" direction="in"/>
    <arg type="s" name="app_id" direction="in"/>
    <arg type="h" name="fd" direction="in"/>
    <arg type="a{{sv}}" name="options" direction="in"/>
    <arg type="u" name="response" direction="out"/>
    <arg type="a{{sv}}" name="results" direction="out"/>
  </method>
</interface></node>""")


def main():
    if len(sys.argv) != 3 or not sys.argv[2].isdigit():
        print("usage: delayed-secret-backend.py BUS_NAME DELAY_MS", file=sys.stderr)
        return 2
    name, delay = sys.argv[1], int(sys.argv[2])
    loop = GLib.MainLoop()
    bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
    bus.set_exit_on_close(False)
    bus.connect("closed", lambda *_: loop.quit())

    def answered(connection, result, invocation):
        try:
            reply = connection.call_with_unix_fd_list_finish(result)[0]
        except GLib.Error as error:
            invocation.return_gerror(error)
            return

        def answer():
            invocation.return_value(reply)
            return False

        GLib.timeout_add(delay, answer)

    def called(connection, sender, path, interface, method, parameters, invocation):
        fds = invocation.get_message().get_unix_fd_list()
        if method != "RetrieveSecret" or fds is None:
            invocation.return_dbus_error("org.freedesktop.DBus.Error.InvalidArgs", "RetrieveSecret with a pipe only")
            return
        forwarded = Gio.UnixFDList.new()
        # get() duplicates the descriptor; append() duplicates it again into the new list.
        fd = fds.get(parameters.get_child_value(2).get_handle())
        index = forwarded.append(fd)
        os.close(fd)
        arguments = GLib.Variant.new_tuple(
            parameters.get_child_value(0), parameters.get_child_value(1),
            GLib.Variant("h", index), parameters.get_child_value(3))
        connection.call_with_unix_fd_list(
            BACKEND, PATH, INTERFACE, "RetrieveSecret", arguments, GLib.VariantType.new("(ua{sv})"),
            Gio.DBusCallFlags.NO_AUTO_START, 60000, forwarded, None, answered, invocation)

    bus.register_object(PATH, NODE.interfaces[0], called, None, None)
    reply = bus.call_sync(
        "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "RequestName",
        GLib.Variant("(su)", (name, 4)), GLib.VariantType.new("(u)"), Gio.DBusCallFlags.NONE, 5000, None)
    if reply.unpack()[0] != 1:  # 1: primary owner; DO_NOT_QUEUE (4) answers 3 when taken
        print(f"delayed-secret-backend: {name} is taken", file=sys.stderr)
        return 1
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, lambda: (loop.quit(), False)[1])
    print("ready", flush=True)
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
