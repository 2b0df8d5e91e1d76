#!/usr/bin/python3
"""A minimal WebKit2GTK browser that keeps its data in a profile folder (which
MiniBrowser's automation mode cannot), for tests that restart the browser on
the same profile. Driven by WebKitWebDriver as MiniBrowser is: WebKitWebDriver
starts it with --automation, and each window the session asks for is a view
controlled by automation, on the profile's data and cache directories.

Usage: webkit-profile-browser.py PROFILE --automation (run under an X display).
"""
import os
import sys

import gi

gi.require_version("Gtk", "3.0")
gi.require_version("WebKit2", "4.1")
from gi.repository import Gtk, WebKit2  # noqa: E402

profile = sys.argv[1]
manager = WebKit2.WebsiteDataManager(
    base_data_directory=os.path.join(profile, "data"),
    base_cache_directory=os.path.join(profile, "cache"),
)
context = WebKit2.WebContext.new_with_website_data_manager(manager)
context.set_automation_allowed(True)


def automation_window(session):
    view = WebKit2.WebView(web_context=context, is_controlled_by_automation=True)
    window = Gtk.Window()
    window.set_default_size(1280, 900)
    window.add(view)
    window.show_all()
    view.connect("close", lambda view: window.destroy())
    return view


def on_automation_started(context, session):
    info = WebKit2.ApplicationInfo()
    info.set_name("webkit-profile-browser")
    info.set_version(1, 0, 0)
    session.set_application_info(info)
    session.connect("create-web-view", automation_window)


context.connect("automation-started", on_automation_started)
Gtk.main()
