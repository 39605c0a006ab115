#!/usr/bin/env python3
"""The auth hook of bench/quick/auth_hook.sh (Python 3 standard library only).

    auth_hook_server.py PORT_FILE

Listens on 127.0.0.1 on a free port, which it writes to PORT_FILE once ready.
GET /hook: 200 with a JSON session (role `user`, user id 5, `Cache-Control:
max-age=600`, so Grafton keeps the answer) when the request's Authorization is
`Bearer opaque-user-token`, 401 otherwise; each call is counted.
GET /calls: the count so far (not counted). On SIGTERM or SIGINT it prints
`auth hook: N calls` on stdout and exits.
"""

import http.server
import json
import os
import signal
import sys
import threading

TOKEN = "Bearer opaque-user-token"
SESSION = json.dumps({"X-Hasura-Role": "user", "X-Hasura-User-Id": "5",
                      "Cache-Control": "max-age=600"}).encode()

calls = 0
lock = threading.Lock()


class Hook(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as a real hook would serve

    def answer(self, status: int, body: bytes):
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        global calls
        if self.path == "/calls":
            with lock:
                n = calls
            return self.answer(200, str(n).encode())
        if self.path.split("?")[0] != "/hook":
            return self.answer(404, b'{"error": "not found"}')
        with lock:
            calls += 1
        if self.headers.get("Authorization") == TOKEN:
            return self.answer(200, SESSION)
        return self.answer(401, b'{"error": "unauthorized"}')

    def log_message(self, *args):
        pass  # quiet: one line per call would cost more than the answer


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
    server.daemon_threads = True

    def stop(*_):
        print(f"auth hook: {calls} calls", flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, sys.argv[1])
    server.serve_forever()


if __name__ == "__main__":
    main()
