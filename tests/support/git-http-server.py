#!/usr/bin/env python3
"""Serves the bare repositories below ROOT over git's smart HTTP protocol on 127.0.0.1:PORT,
through `git http-backend` (CGI). For tests only: no authentication, loopback only."""
import http.server
import os
import subprocess
import sys

ROOT = sys.argv[2]


class Handler(http.server.BaseHTTPRequestHandler):
    def handle_one(self):
        path, _, query = self.path.partition("?")
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = self.read_chunked()
        else:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
        length = len(body)
        env = {
            "GIT_PROJECT_ROOT": ROOT,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(length),
            "REMOTE_ADDR": "127.0.0.1",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.split(b"\r\n"):
            name, _, value = line.decode().partition(":")
            if name.lower() == "status":
                status = int(value.strip().split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def read_chunked(self):
        # A push's pack arrives in chunks (git and libgit2 send large bodies so).
        body = b""
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                while self.rfile.readline().strip():
                    pass
                return body
            body += self.rfile.read(size)
            self.rfile.readline()

    do_GET = handle_one
    do_POST = handle_one

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), Handler)
print("ready", flush=True)
server.serve_forever()
