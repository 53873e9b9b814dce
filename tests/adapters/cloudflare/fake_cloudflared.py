#!/usr/bin/env python3
"""A stand-in for `cloudflared tunnel --no-autoupdate --metrics 127.0.0.1:PORT run`, which is not
packaged by Debian and cannot reach Cloudflare here. It appends one JSON line per start to
$FAKE_CLOUDFLARED_RECORD: its argv, the TUNNEL_TOKEN it found in its environment and the names
of the other variables there. It serves
/ready on the metrics address as cloudflared does: 200 while "connected", 503 while the file
$FAKE_CLOUDFLARED_RECORD.notready exists. With $FAKE_CLOUDFLARED_EXIT set it prints an error and
exits with that status at once, as cloudflared does when Cloudflare refuses its token."""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

record = os.environ["FAKE_CLOUDFLARED_RECORD"]
with open(record, "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "token": os.environ.get("TUNNEL_TOKEN"), "pid": os.getpid(),
                        "environ": sorted(os.environ)}) + "\n")

if os.environ.get("FAKE_CLOUDFLARED_EXIT"):
    print("ERR Couldn't start tunnel error=\"Unauthorized: Invalid tunnel secret\"", file=sys.stderr, flush=True)
    sys.exit(int(os.environ["FAKE_CLOUDFLARED_EXIT"]))

args = sys.argv[1:]
assert args[:1] == ["tunnel"] and args[-1:] == ["run"], args
host, port = args[args.index("--metrics") + 1].rsplit(":", 1)


class Ready(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        ready = self.path == "/ready" and not os.path.exists(record + ".notready")
        body = json.dumps({"status": 200 if ready else 503, "readyConnections": 4 if ready else 0}).encode()
        self.send_response(200 if ready else 503)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


print("INF Starting tunnel", flush=True)
HTTPServer((host, int(port)), Ready).serve_forever()
