"""Public Python clients of Pieces OS, their start-up re-enacted against a running service
(the loopback server): `python3 python_clients.py <client> <port>` prints one JSON object with
what the client saw. The order of the calls, their timeouts and what makes each client stop are
its own (cited per function); pieces_wrapper.py re-enacts the wrapper they are all built on.
"""
import json
import sys
import time

import pieces_wrapper as w


def version_ok(version, minimum="12.0.0", maximum="13.0.0"):
    """wrapper/version_compatibility.py VersionChecker.version_check (the clients' range: >= 12.0.0, < 13.0.0)."""
    parse = lambda v: tuple(int(x) for x in v.split("-")[0].split(".")[:3])
    return parse(minimum) <= parse(version) < parse(maximum)


def find_port(expected):
    """client.py _port_scanning over 39300-39333. Another Pieces OS-like server on the machine (another
    test run) may answer too: the scan's mechanics are proven by finding ours among what answered."""
    found = w.port_scanning()
    if str(expected) not in found:
        raise w.StartupError(f"the port scan did not find the service on {expected}: {found}")
    return str(expected)


def started(client, name, platform="LINUX", version="1.0.0"):
    """client.py _startup: health, connect (then the `application` header), a user or nothing starts."""
    if not client.is_pieces_running():
        raise w.StartupError("is_pieces_running: no")
    context = client.connect(name, platform, version)
    user = client.call("GET", "/user").get("user")
    if not user:
        raise w.StartupError("_startup: no user, so the client does not start")
    return context, user


def sdk_wrapper(port):
    """pieces-app/pieces-os-client-sdk-for-python, src/pieces_os_client/wrapper/client.py PiecesClient():
    _startup opens the conversation, assets, user, health, anchors, LTM vision and ranges websockets,
    then sets model_name = "GPT-3.5-turbo Chat Model"; wait_for_cache waits for every socket;
    copilot.py stream_question then asks."""
    client = w.Client(f"http://127.0.0.1:{find_port(port)}")
    context, user = started(client, "OPEN_SOURCE")
    sockets, caches, state = w.start_websockets(client, ["conversation", "asset", "user", "health", "anchor", "ltm_vision", "range"])
    client.set_model_name("GPT-3.5-turbo Chat Model")
    began = time.time()
    waited = w.wait_all(sockets, 15)
    frames = w.stream_question(client, "How do I retry a call with exponential backoff?")
    result = {
        "application": context["application"]["id"],
        "user": user["name"],
        "waited": waited,
        "cache_seconds": round(time.time() - began, 1),
        "cached": {kind: len(cache.snapshot) for kind, cache in caches.items()},
        "cache_errors": {kind: cache.errors for kind, cache in caches.items()},
        "signed_in": state["user"] is not None and state["user"] != "unset",
        "pos_stream": state["pos_stream"],
        "ltm_enabled": (state["ltm"] or {}).get("vision", {}).get("activation") is not None,
        "statuses": [f["status"] for f in frames],
        "answer": w.answer_text(frames),
        "conversation": frames[-1]["conversation"],
    }
    for sock in sockets.values():
        sock.close()
    return result


def cli(port):
    """pieces-app/cli-agent: src/pieces/settings.py Settings.startup (is_pieces_running, version_check in
    [12.0.0, 13.0.0), check_login: GET /user, the model from the config, get_os_id: the OS_SERVER entry of
    GET /applications), src/pieces/config/schemas/model.py get_default_model_info (the model whose unique is
    gemini-2.0-flash-lite-001), the vendored client's `application` property (connect as
    PIECES_FOR_DEVELOPERS_CLI) and connect_websocket (conversations, assets, user, health), then
    src/pieces/copilot/ask_command.py (stream_question, waiting Settings.TIMEOUT = 40 s),
    src/pieces/core/open_command.py (`pieces open --copilot`: os_applet_launch COPILOT, opens its port), and
    `pieces logout` / `pieces login` (sign_out_of_os; sign_into_os then allocations connect)."""
    client = w.Client(f"http://127.0.0.1:{find_port(port)}")
    if not client.is_pieces_running():
        raise w.StartupError("is_pieces_running: no")
    version = client.version()
    if not version_ok(version):
        raise w.StartupError(f"version {version} is not in [12.0.0, 13.0.0)")
    if not client.call("GET", "/user").get("user"):
        raise w.StartupError("check_login: not signed in")
    default = next((m for m in client.models() if m.get("unique") == "gemini-2.0-flash-lite-001"), None)
    if default is None:
        raise ValueError("Default model not found in available models")
    client.set_model_name(default["name"])
    os_id = next((a["id"] for a in client.call("GET", "/applications")["iterable"] if a["name"] == "OS_SERVER"), None)
    context = client.connect("PIECES_FOR_DEVELOPERS_CLI", "LINUX", "1.15.0")
    sockets, caches, state = w.start_websockets(client, ["conversation", "asset", "user", "health"])
    waited = w.wait_all(sockets, 15)
    frames = w.stream_question(client, "What does debounce do?", timeout=40)
    applet = client.call("POST", "/os/applet/launch", {"type": "COPILOT"})
    signed_out = client.call("POST", "/os/sign_out")
    after_logout = client.call("GET", "/user").get("user")
    signed_in = client.call("POST", "/os/sign_in")
    allocation = client.call("POST", "/allocations/connect", signed_in)
    result = {
        "version": version,
        "model": client.model_name,
        "os_id": os_id,
        "context_os": context["os"],
        "waited": waited,
        "statuses": [f["status"] for f in frames],
        "answer": w.answer_text(frames),
        "applet_port": applet["port"],
        "signed_out": signed_out,
        "after_logout": after_logout,
        "signed_in": signed_in["name"],
        "allocation": allocation["status"]["cloud"],
    }
    for sock in sockets.values():
        sock.close()
    return result


def sublime(port):
    """pieces-app/plugin_sublime: settings.py PiecesSettings (PiecesClient as SUBLIME, no websockets of its
    own), main.py run_async (is_pieces_running, then the health websocket whose open runs startup()),
    startup_utils.py check_compatiblity (version in [12.0.0, 13.0.0)), settings.py models_init (the models
    by unique; the setting's unique "o4-mini-2025-04-16", else "gpt-4o"), then the conversation, assets,
    user and anchors websockets (main.py startup)."""
    client = w.Client(f"http://127.0.0.1:{find_port(port)}")
    context, _user = started(client, "SUBLIME", "LINUX", "1.6.0")
    client.set_model_name("GPT-3.5-turbo Chat Model")  # PiecesClient._startup's own default
    startup_ran = {"ok": False}
    result = {}

    def startup(_ws):
        version = client.version()
        if not version_ok(version):
            raise w.StartupError(f"version {version} is not in [12.0.0, 13.0.0)")
        by_unique = {m["unique"]: m for m in client.models() if m.get("unique")}
        model = by_unique.get("o4-mini-2025-04-16") or by_unique["gpt-4o"]
        client.model_id = model["id"]
        result["model"] = model["unique"]
        startup_ran["ok"] = True

    health = w.Socket(client.ws_base + "/.well-known/stream/health", lambda m: None, on_open=startup).start()
    health.initialized.wait(5)
    deadline = time.time() + 5
    while not startup_ran["ok"] and time.time() < deadline:
        time.sleep(0.01)
    sockets, caches, state = w.start_websockets(client, ["conversation", "asset", "user", "anchor"])
    waited = w.wait_all(sockets, 15)
    frames = w.stream_question(client, "Explain this function")
    result.update({
        "application": context["application"]["name"],
        "startup_ran": startup_ran["ok"],
        "health_frames": health.messages[:1],
        "waited": waited,
        "statuses": [f["status"] for f in frames],
        "answer": w.answer_text(frames),
    })
    for sock in [health, *sockets.values()]:
        sock.close()
    return result


def neovim(port):
    """pieces-app/plugin_neovim: rplugin/python3/pieces_python/settings.py load_config (PiecesClient as VIM,
    no websockets of its own), startup.py Startup.startup (user, assets and conversations websockets, then
    the health websocket whose open runs on_startup: utils.py check_compatibility, the model name from the
    settings or "GPT-4o Chat Model", every websocket started), and utils.py on_copilot_message (each answer
    text appended, COMPLETED ends it)."""
    client = w.Client(f"http://127.0.0.1:{find_port(port)}")
    started(client, "VIM", "LINUX", "1.0.0")
    client.set_model_name("GPT-3.5-turbo Chat Model")
    sockets, caches, state = w.start_websockets(client, ["user", "asset", "conversation"])
    ready = {"ok": False}

    def on_startup(_ws):
        if not client.is_pieces_running() or not version_ok(client.version()):
            raise w.StartupError("check_compatibility failed")
        client.set_model_name("GPT-4o Chat Model")
        ready["ok"] = True

    health = w.Socket(client.ws_base + "/.well-known/stream/health", lambda m: None, on_open=on_startup).start()
    deadline = time.time() + 5
    while not ready["ok"] and time.time() < deadline:
        time.sleep(0.01)
    waited = w.wait_all(sockets, 15)
    frames = w.stream_question(client, "How do I reverse a list?")
    result = {
        "ready": ready["ok"],
        "model": client.model_name,
        "waited": waited,
        "statuses": [f["status"] for f in frames],
        "chat": w.answer_text(frames),
        "completed": frames[-1]["status"] == "COMPLETED",
    }
    for sock in [health, *sockets.values()]:
        sock.close()
    return result


def copilot_context(port):
    """The Python SDK wrapper's copilot context paths (pieces-app/cli-agent, vendored wrapper:
    copilot.py Context._add_path and _remove_path, basic_identifier/anchor.py BasicAnchor.from_raw_content,
    exists, create and chats, basic_identifier/chat.py BasicChat.associate_anchor and disassociate_anchor):
    a path becomes an anchor (one already cached for the same path is reused, else
    anchors_create_new_anchor(transferables=False)), associated with the chat through
    conversation_associate_anchor(conversation, anchor); the anchor's chats are read from the anchors
    cache (`conversations.iterable`), kept by the anchors websocket."""
    import os

    client = w.Client(f"http://127.0.0.1:{find_port(port)}")
    started(client, "OPEN_SOURCE")
    sockets, caches, _state = w.start_websockets(client, ["conversation", "anchor"])
    waited = w.wait_all(sockets, 15)
    chat = client.call("POST", "/conversations/create?transferables=false", {"type": "COPILOT", "name": "New Conversation"})
    path = os.path.dirname(os.path.abspath(__file__))

    def fullpath(anchor):
        return [p["reference"]["fullpath"] for p in anchor["points"]["iterable"] if p.get("reference", {}).get("fullpath")]

    def from_raw_content(path):
        for anchor in list(caches["anchor"].snapshot.values()):
            if anchor and fullpath(anchor) == [path]:
                return anchor["id"], False
        kind = "DIRECTORY" if os.path.isdir(path) else "FILE"
        anchor = client.call("POST", "/anchors/create?transferables=false", {"type": kind, "fullpath": path})
        caches["anchor"].snapshot[anchor["id"]] = anchor
        return anchor["id"], True

    def chats_of(anchor_id, expected, timeout=5):
        """BasicAnchor.chats, once the anchors websocket brought the change (or as it stands after `timeout`)."""
        deadline = time.time() + timeout
        while True:
            anchor = caches["anchor"].snapshot.get(anchor_id) or {}
            chats = [c["id"] for c in (anchor.get("conversations") or {}).get("iterable", [])]
            if chats == expected or time.time() > deadline:
                return chats
            time.sleep(0.02)

    anchor_id, created = from_raw_content(path)
    client.call("POST", f"/conversation/{chat['id']}/anchors/associate/{anchor_id}")
    chats_after_add = chats_of(anchor_id, [chat["id"]])
    # The same path again: the cached anchor is reused and associated again.
    again_id, created_again = from_raw_content(path)
    client.call("POST", f"/conversation/{chat['id']}/anchors/associate/{again_id}")
    listed = [a["id"] for a in (client.call("GET", f"/conversation/{chat['id']}").get("anchors") or {}).get("iterable", [])]
    client.call("POST", f"/conversation/{chat['id']}/anchors/disassociate/{anchor_id}")
    chats_after_remove = chats_of(anchor_id, [])
    listed_after_remove = (client.call("GET", f"/conversation/{chat['id']}").get("anchors") or {}).get("iterable", [])
    for sock in sockets.values():
        sock.close()
    return {
        "waited": waited,
        "created": created,
        "reused": again_id == anchor_id and not created_again,
        "chats_after_add": chats_after_add == [chat["id"]],
        "conversation_lists": listed == [anchor_id],
        "chats_after_remove": chats_after_remove,
        "conversation_lists_after_remove": listed_after_remove,
        "cache_errors": {kind: cache.errors for kind, cache in caches.items()},
    }


if __name__ == "__main__":
    name, port = sys.argv[1], int(sys.argv[2])
    try:
        print(json.dumps({"ok": True, **globals()[name](port)}))
    except Exception as error:  # the client stopped: say where
        print(json.dumps({"ok": False, "error": f"{type(error).__name__}: {error}"}))
