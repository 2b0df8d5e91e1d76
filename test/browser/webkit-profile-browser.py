#!/usr/bin/python3
"""A minimal WebKit2GTK browser that keeps its data in a profile folder (which
MiniBrowser's automation mode cannot), for tests that restart the browser on
the same profile. Driven by JSON lines: each command on stdin
({"id", "command", ...}) gets one answer on stdout ({"id", "value"} or
{"id", "error"}), in any order.

    open                        -> a new window; value: its page number
    goto {page, url}            -> loads url; answers once loaded
    reload {page}               -> reloads; answers once loaded
    call {page, body, arg}      -> runs the async function body with `arg` (a JSON
                                   string) in scope; value: what it returns (a string)
    screenshot {page, path}     -> writes a PNG of the page
    close {page}                -> closes the window
    quit                        -> exits

Usage: webkit-profile-browser.py PROFILE (run under an X display).
"""
import json
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import GLib, Gtk, WebKit2  # noqa: E402

profile = sys.argv[1]
manager = WebKit2.WebsiteDataManager(
    base_data_directory=os.path.join(profile, "data"),
    base_cache_directory=os.path.join(profile, "cache"),
)
context = WebKit2.WebContext.new_with_website_data_manager(manager)
pages = {}
loading = {}


def answer(id, **fields):
    sys.stdout.write(json.dumps({"id": id, **fields}) + "\n")
    sys.stdout.flush()


def on_load(view, event):
    if event == WebKit2.LoadEvent.FINISHED:
        for id in loading.pop(view, []):
            answer(id, value=None)


def on_load_failed(view, event, uri, error):
    for id in loading.pop(view, []):
        answer(id, error=f"loading {uri} failed: {error.message}")
    return False


def open_page():
    view = WebKit2.WebView.new_with_context(context)
    view.connect("load-changed", on_load)
    view.connect("load-failed", on_load_failed)
    window = Gtk.Window()
    window.set_default_size(1280, 900)
    window.add(view)
    window.show_all()
    number = len(pages) + 1
    pages[number] = (window, view)
    return number


def run(message):
    id = message["id"]
    command = message["command"]
    try:
        if command == "open":
            answer(id, value=open_page())
            return
        if command == "quit":
            answer(id, value=None)
            Gtk.main_quit()
            return
        window, view = pages[message["page"]]
        if command == "goto":
            loading.setdefault(view, []).append(id)
            view.load_uri(message["url"])
        elif command == "reload":
            loading.setdefault(view, []).append(id)
            view.reload()
        elif command == "call":
            def called(view, result):
                try:
                    value = view.call_async_javascript_function_finish(result)
                    answer(id, value=value.to_string())
                except GLib.Error as error:
                    answer(id, error=error.message)

            arguments = GLib.Variant("a{sv}", {"arg": GLib.Variant("s", message["arg"])})
            view.call_async_javascript_function(message["body"], -1, arguments, None, None, None, called)
        elif command == "screenshot":
            def shot(view, result):
                try:
                    view.get_snapshot_finish(result).write_to_png(message["path"])
                    answer(id, value=None)
                except GLib.Error as error:
                    answer(id, error=error.message)

            view.get_snapshot(WebKit2.SnapshotRegion.FULL_DOCUMENT, WebKit2.SnapshotOptions.NONE, None, shot)
        elif command == "close":
            del pages[message["page"]]
            window.destroy()
            answer(id, value=None)
        else:
            answer(id, error=f"unknown command {command}")
    except Exception as error:  # noqa: BLE001 - every failure is answered, never fatal
        answer(id, error=repr(error))


pending = b""


def on_input(fd, condition):
    global pending
    data = os.read(fd, 1 << 20)
    if not data:
        Gtk.main_quit()
        return False
    pending += data
    while b"\n" in pending:
        line, pending = pending.split(b"\n", 1)
        run(json.loads(line))
    return True


GLib.io_add_watch(sys.stdin.fileno(), GLib.PRIORITY_DEFAULT, GLib.IO_IN | GLib.IO_HUP, on_input)
Gtk.main()
