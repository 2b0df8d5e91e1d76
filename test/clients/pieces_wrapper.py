"""The start-up of the Pieces Python SDK wrapper, re-enacted with the standard library and
websocket-client (Debian's python3-websocket): the pydantic-2 SDK cannot be installed here.

Each step follows the public wrapper, pieces-app/pieces-os-client-sdk-for-python (its vendored
copies in pieces-app/cli-agent, pieces-app/plugin_sublime and the Neovim plugin are the same code):

- src/pieces_os_client/wrapper/client.py: PiecesClient._port_scanning (ports 39300-39333 in
  parallel, 20 workers: a 0.05 s socket check, then HEAD /.well-known/health with a 0.1 s
  timeout), is_pieces_running (GET health, 0.1 s), _startup (connect, then the `application`
  header, then GET /user: no user means not started), the websockets it opens, and the model
  setter (GET /models; names of the models that are cloud or downloaded; raises if absent).
- wrapper/websockets/base_websocket.py: one thread per socket (WebSocketApp.run_forever); a socket
  counts as initialized on open, except the identifier streams.
- wrapper/streamed_identifiers/_streamed_identifiers.py: the identifier cache's worker takes ids
  from a queue with get(block, timeout=5) and counts as initialized once the first message's ids
  are loaded (an empty first message: after the 5 s wait), each id read with its GET.
- wrapper/websockets/auth_ws.py: a frame that is not JSON (empty) means signed out.
- wrapper/websockets/health_ws.py: a frame starting `ok` means the OS stream runs.
- wrapper/websockets/ltm_vision_ws.py: each frame makes it GET the vision status.
- wrapper/copilot.py: stream_question sends a QGPTStreamInput with a relevance input
  (options.question true, the model id) and yields frames until the first that is not IN-PROGRESS.

Every HTTP answer is decoded strictly here (missing required fields and unknown enum values fail),
as the pydantic models would.
"""
import json
import queue
import socket
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor, as_completed

import websocket

STREAM_STATUSES = {"UNKNOWN", "CANCELED", "INITIALIZED", "IN-PROGRESS", "COMPLETED", "FAILED", "STOPPED", "RESET"}


class StartupError(Exception):
    pass


def port_scanning():
    """client.py PiecesClient._port_scanning, as written."""

    def check_port(port):
        try:
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
                sock.settimeout(0.05)
                if sock.connect_ex(("127.0.0.1", port)) != 0:
                    return None
            request = urllib.request.Request(f"http://127.0.0.1:{port}/.well-known/health", method="HEAD")
            with urllib.request.urlopen(request, timeout=0.1) as response:
                if response.status == 200:
                    return str(port)
        except Exception:
            pass
        return None

    found = []
    with ThreadPoolExecutor(max_workers=20) as executor:
        futures = [executor.submit(check_port, p) for p in range(39300, 39334)]
        for future in as_completed(futures):
            result = future.result()
            if result is not None:
                found.append(result)
    if not found:
        raise ValueError("PiecesOS is not running")
    return found


class Client:
    """The parts of PiecesClient a start-up uses, over HTTP."""

    def __init__(self, host):
        self.host = host
        self.headers = {}
        self.ws_base = host.replace("http", "ws")

    def call(self, method, path, body=None, timeout=10, text=False):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json", **self.headers}
        request = urllib.request.Request(self.host + path, data=data, method=method, headers=headers)
        with urllib.request.urlopen(request, timeout=timeout) as response:
            raw = response.read().decode()
            if text:
                return raw
            return json.loads(raw) if raw else None

    def is_pieces_running(self, maximum_retries=1):
        """client.py is_pieces_running: GET health with a 0.1 s timeout."""
        for _ in range(maximum_retries):
            try:
                with urllib.request.urlopen(urllib.request.Request(self.host + "/.well-known/health"), timeout=0.1) as response:
                    return response.status == 200
            except Exception:
                pass
        return False

    def version(self):
        return self.call("GET", "/.well-known/version", text=True)

    def connect(self, name, platform, version):
        context = self.call("POST", "/connect", {"application": {"name": name, "platform": platform, "version": version}})
        require(context, ["os", "application", "health"], "Context")
        require(context["application"], ["id", "name", "version", "platform", "onboarded", "privacy"], "Application")
        require(context["health"]["os"], ["id", "version"], "OSHealth")
        self.headers["application"] = context["application"]["id"]
        return context

    def models(self):
        models = self.call("GET", "/models")["iterable"]
        for model in models:
            require(model, ["id", "version", "created", "name", "cloud", "type", "usage"], "Model")
        return models

    def available_models(self):
        """client.py get_models: {name: id} of the models that are cloud or downloaded."""
        return {m["name"]: m["id"] for m in self.models() if m.get("cloud") or m.get("downloaded")}

    def set_model_name(self, name):
        """client.py model_name setter: raises when the name is not among the available models."""
        models = self.available_models()
        if name not in models:
            raise ValueError(f"Not a vaild model name, the available models are {', '.join(models.keys())}")
        self.model_name = name
        self.model_id = models[name]


def require(value, keys, model):
    """A required field missing fails as the SDK's models fail."""
    missing = [k for k in keys if k not in value or value[k] is None]
    if missing:
        raise StartupError(f"{model} is missing {', '.join(missing)}: {json.dumps(value)[:200]}")


class Socket:
    """base_websocket.py BaseWebsocket: a WebSocketApp on its own thread; `initialized` as the wrapper sets it."""

    def __init__(self, url, on_message, initialized_on_open=True, on_open=None):
        self.url = url
        self.messages = []
        self.opened = threading.Event()
        self.initialized = threading.Event()
        self.initialized_on_open = initialized_on_open
        self.closed = threading.Event()
        self._on_message = on_message
        self._on_open = on_open
        self.errors = []

    def start(self):
        def opened(ws):
            self.opened.set()
            if self._on_open:
                self._on_open(ws)
            if self.initialized_on_open:
                self.initialized.set()

        def message(ws, data):
            self.messages.append(data)
            self._on_message(data)

        self.app = websocket.WebSocketApp(
            self.url, on_open=opened, on_message=message, on_error=lambda ws, e: self.errors.append(str(e)), on_close=lambda ws, c, m: self.closed.set()
        )
        self.thread = threading.Thread(target=self.app.run_forever, daemon=True)
        self.thread.start()
        return self

    def close(self):
        self.app.close()


class IdentifierCache:
    """_streamed_identifiers.py StreamedIdentifiersCache: the worker thread and its 5 s queue timeout."""

    def __init__(self, key, fetch):
        self.key = key
        self.fetch = fetch
        self.snapshot = {}
        self.queue = queue.Queue()
        self.pending = set()
        self.block = True
        self.first_shot = True
        self.initialized = threading.Event()
        self.lock = threading.Lock()
        self.errors = []
        self.worker_thread = threading.Thread(target=self.worker, daemon=True)

    def worker(self):
        while True:
            try:
                identifier = self.queue.get(block=self.block, timeout=5)
                with self.lock:
                    self.pending.discard(identifier)
                try:
                    self.snapshot[identifier] = self.fetch(identifier)
                except Exception as error:  # the wrapper prints and goes on
                    self.errors.append(f"{identifier}: {error}")
                self.queue.task_done()
            except queue.Empty:
                if self.block:
                    continue
                if self.first_shot:
                    self.first_shot = False
                    self.initialized.set()
                return

    def on_message(self, message):
        """streamed_identifiers_callback: StreamedIdentifiers.from_json, then queue every id."""
        ids = json.loads(message)
        if not isinstance(ids.get("iterable"), list):
            raise StartupError(f"not StreamedIdentifiers: {message[:200]}")
        self.block = True
        if not self.worker_thread.is_alive():
            self.worker_thread = threading.Thread(target=self.worker, daemon=True)
            self.worker_thread.start()
        for item in ids["iterable"]:
            identifier = item[self.key]["id"]
            with self.lock:
                if identifier in self.pending:
                    continue
                if item.get("deleted"):
                    self.snapshot.pop(identifier, None)
                else:
                    self.queue.put(identifier)
                    self.pending.add(identifier)
        self.block = False


def user_profile(message):
    """auth_ws.py: UserProfile.from_json; a frame that is not JSON means signed out (None)."""
    try:
        profile = json.loads(message)
    except json.decoder.JSONDecodeError:
        return None
    require(profile, ["id", "aesthetics"], "UserProfile")
    unknown = set(profile) - {"schema", "picture", "email", "created", "updated", "username", "id", "name", "aesthetics", "vanityname", "allocation", "providers", "auth0", "descope"}
    if unknown:
        raise StartupError(f"UserProfile has no {', '.join(sorted(unknown))}")
    return profile


def start_websockets(client, kinds):
    """client.py _startup's websockets (the ones `kinds` names), started together as BaseWebsocket.start_all does."""
    opened = {}
    caches = {}
    state = {"user": "unset", "pos_stream": False, "ltm": None}

    def on_user(message):
        state["user"] = user_profile(message)

    def on_health(message):
        if message.lower().startswith("ok"):
            state["pos_stream"] = True

    def on_vision(_message):
        state["ltm"] = client.call("GET", "/workstream_pattern_engine/processors/vision/status")

    fetchers = {
        "conversation": lambda i: client.call("GET", f"/conversation/{i}"),
        "asset": lambda i: client.call("GET", f"/asset/{i}"),
        "anchor": lambda i: client.call("GET", f"/anchor/{i}"),
        "range": lambda i: client.call("GET", f"/range/{i}"),
    }
    paths = {
        "conversation": "/conversations/stream/identifiers",
        "asset": "/assets/stream/identifiers",
        "anchor": "/anchors/stream/identifiers",
        "range": "/ranges/stream/identifiers",
    }
    for kind in kinds:
        if kind in paths:
            cache = IdentifierCache(kind, fetchers[kind])
            caches[kind] = cache
            sock = Socket(client.ws_base + paths[kind], cache.on_message, initialized_on_open=False)
            sock.initialized = cache.initialized
            opened[kind] = sock
        elif kind == "user":
            opened[kind] = Socket(client.ws_base + "/user/stream", on_user)
        elif kind == "health":
            opened[kind] = Socket(client.ws_base + "/.well-known/stream/health", on_health)
        elif kind == "ltm_vision":
            opened[kind] = Socket(client.ws_base + "/workstream_pattern_engine/processors/vision/status/stream", on_vision)
    for sock in opened.values():
        sock.start()
    return opened, caches, state


def wait_all(sockets, timeout):
    """BaseWebsocket.wait_all: every socket's initialized event (with a bound, so that a test ends)."""
    waited = {}
    for kind, sock in sockets.items():
        waited[kind] = sock.initialized.wait(timeout)
    return waited


def stream_question(client, query, conversation=None, timeout=40):
    """copilot.py stream_question and _return_on_message: yield until the first frame that is not IN-PROGRESS."""
    frames = queue.Queue()
    ask = Socket(client.ws_base + "/qgpt/stream", lambda m: frames.put(json.loads(m)))
    # The SDK's to_json leaves out what is None (a new conversation: no `conversation`).
    payload = {
        **({"conversation": conversation} if conversation else {}),
        "relevance": {
            "application": client.headers["application"],
            "query": query,
            "model": client.model_id,
            "options": {"question": True},
        },
    }
    ask._on_open = lambda ws: ws.send(json.dumps(payload))
    ask.start()
    out = []
    try:
        while True:
            frame = frames.get(timeout=timeout)
            require(frame, ["conversation"], "QGPTStreamOutput")
            if frame.get("status") not in STREAM_STATUSES:
                raise StartupError(f"QGPTStreamOutput status {frame.get('status')!r} is not a QGPTStreamEnum")
            out.append(frame)
            if frame.get("status") != "IN-PROGRESS":
                break
    finally:
        ask.close()
    return out


def answer_text(frames):
    return "".join(a["text"] for f in frames if f.get("question") for a in f["question"]["answers"]["iterable"] if a.get("text"))
