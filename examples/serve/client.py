"""A client in another language against `npx pieces-os-worker serve`: Python, standard library only.

    python3 client.py http://127.0.0.1:39300
"""
import json
import sys
import urllib.error
import urllib.request

base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:39300"


def call(method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if path.startswith("/__pieces/"):
        headers["X-Pieces-Control"] = "1"  # the controls take no request a web page could send
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request) as response:
        text = response.read().decode()
        return json.loads(text) if text else None


assert urllib.request.urlopen(base + "/.well-known/health").read() == b"ok"

# A test's arrangement, through the controls over HTTP: known data, a forced failure.
call("POST", "/__pieces/reset")  # back to the data serve started with (--data)
call("POST", "/__pieces/seed", {"conversations": [{"type": "COPILOT", "name": "Seeded from Python"}]})
call("POST", "/__pieces/use", {"operation": "conversationsSnapshot", "status": 500, "body": "forced", "once": True})
try:
    call("GET", "/conversations")
    raise AssertionError("the override did not apply")
except urllib.error.HTTPError as error:
    assert error.code == 500 and error.read() == b"forced"

created = call("POST", "/conversations/create", {"type": "COPILOT", "name": "From Python"})
names = [c.get("name") for c in call("GET", "/conversations?transferables=false")["iterable"]]
assert names[-2:] == ["Seeded from Python", "From Python"], names
print(json.dumps({"created": created["id"], "names": names}))
