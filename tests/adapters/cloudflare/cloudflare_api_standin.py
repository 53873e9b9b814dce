#!/usr/bin/env python3
"""A local stand-in for the parts of Cloudflare's API (v4) the tunnel router uses.

It answers the documented requests with the documented envelope
{"success", "errors": [{"code", "message"}], "messages", "result"}:

  GET    /zones/{zone_id}                                       the zone (its name)
  GET    /accounts/{account_id}/cfd_tunnel/{tunnel_id}          the tunnel (its status)
  GET    /accounts/{account_id}/cfd_tunnel/{tunnel_id}/token    the token cloudflared runs with
  GET    /accounts/{account_id}/cfd_tunnel/{tunnel_id}/configurations
  PUT    /accounts/{account_id}/cfd_tunnel/{tunnel_id}/configurations   {"config": {"ingress": [...]}}
  GET    /zones/{zone_id}/dns_records?name=NAME
  POST   /zones/{zone_id}/dns_records                           {"type", "name", "content", "proxied", "ttl", ...}
  DELETE /zones/{zone_id}/dns_records/{id}

Every request must carry "Authorization: Bearer TOKEN" (TOKEN from $CF_STANDIN_TOKEN, never
argv); bodies are checked as the API reference and cloudflared's ingress rules describe them, and
a request that breaks a rule gets a 400 naming it. /__control (no token) lets a test read and set
the state and make the next matching requests fail: with a status and error envelope, a 403 that
refuses the token, a body that is not the envelope, or no answer before the client's deadline.

Prints "port N" once it listens on 127.0.0.1 (port 0: any).
"""

import json
import os
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = os.environ["CF_STANDIN_TOKEN"]
ACCOUNT, TUNNEL, ZONE, ZONE_NAME = sys.argv[1:5]
TUNNEL_TOKEN = os.environ.get("CF_STANDIN_TUNNEL_TOKEN", "tunnel-token")

LOCK = threading.Lock()
STATE = {
    "config": {"ingress": [{"service": "http_status:404"}]},
    "version": 0,
    "dns": [],
    "tunnel_status": "healthy",
    "wildcards_allowed": True,
    "requests": [],
    "failures": [],
}

SERVICE = re.compile(r"^(https?|unix|tcp|ssh|rdp|unix\+tls|smb)://.+|^http_status:[1-5][0-9][0-9]$|^hello_world$")
HOST = re.compile(r"^(\*\.)?([a-z0-9]([-a-z0-9]*[a-z0-9])?\.)*[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
RULE_KEYS = {"hostname", "path", "service", "originRequest"}


def envelope(result=None, errors=None):
    return {"success": not errors, "errors": errors or [], "messages": [], "result": result}


def check_ingress(body):
    """None when body is a valid PUT body, else what is wrong (as cloudflared would say it)."""
    if not isinstance(body, dict) or not isinstance(body.get("config"), dict):
        return "the body needs a config object"
    ingress = body["config"].get("ingress")
    if not isinstance(ingress, list) or not ingress:
        return "At least one ingress rule needs to be defined"
    for i, rule in enumerate(ingress):
        if not isinstance(rule, dict):
            return f"ingress[{i}] is not an object"
        unknown = set(rule) - RULE_KEYS
        if unknown:
            return f"ingress[{i}] has unknown fields {sorted(unknown)}"
        service = rule.get("service")
        if not isinstance(service, str) or not SERVICE.match(service):
            return f"ingress[{i}].service {service!r} is not a supported service"
        host = rule.get("hostname")
        if host is not None and (not isinstance(host, str) or not HOST.match(host)):
            return f"ingress[{i}].hostname {host!r}: hostname patterns can have one wildcard, for subdomains only"
        path = rule.get("path")
        if path is not None:
            if not isinstance(path, str):
                return f"ingress[{i}].path is not a string"
            try:
                re.compile(path)
            except re.error as e:
                return f"ingress[{i}].path {path!r} is not a regular expression: {e}"
        if "originRequest" in rule and not isinstance(rule["originRequest"], dict):
            return f"ingress[{i}].originRequest is not an object"
    last = ingress[-1]
    if last.get("hostname") or last.get("path"):
        return "The last ingress rule must match all URLs (i.e. it should not have a hostname or path filter)"
    return None


def check_record(body):
    if not isinstance(body, dict):
        return "the body is not a DNS record"
    if body.get("type") != "CNAME":
        return "this stand-in makes CNAME records only"
    name = body.get("name")
    if not isinstance(name, str) or not (name == ZONE_NAME or name.endswith("." + ZONE_NAME)):
        return f"name {name!r} is not in zone {ZONE_NAME}"
    if not isinstance(body.get("content"), str) or not body["content"]:
        return "content is required"
    if "proxied" in body and not isinstance(body["proxied"], bool):
        return "proxied must be a boolean"
    ttl = body.get("ttl", 1)
    if not isinstance(ttl, int) or not (ttl == 1 or 60 <= ttl <= 86400):
        return "ttl must be 1 (automatic) or between 60 and 86400"
    if "comment" in body and (not isinstance(body["comment"], str) or len(body["comment"]) > 100):
        return "comment must be a string of at most 100 characters"
    return None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, payload, raw=None):
        data = raw if raw is not None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, code, message):
        self.reply(status, envelope(errors=[{"code": code, "message": message}]))

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            return "not json"

    def do_GET(self):
        self.handle_any("GET")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_POST(self):
        self.handle_any("POST")

    def do_DELETE(self):
        self.handle_any("DELETE")

    def handle_any(self, method):
        url = urlsplit(self.path)
        body = self.body()
        if url.path.startswith("/__control"):
            return self.control(method, url.path, body)
        with LOCK:
            STATE["requests"].append({
                "method": method, "path": url.path, "query": url.query, "body": body,
                "authorization": self.headers.get("Authorization", ""),
            })
            failure = None
            for f in STATE["failures"]:
                if f["method"] == method and f["path_contains"] in url.path and f["times"] != 0:
                    f["times"] -= 1
                    failure = dict(f)
                    break
        if self.headers.get("Authorization") != "Bearer " + TOKEN:
            return self.error(403, 10000, "Authentication error")
        if failure:
            kind = failure["kind"]
            if kind == "refuse-token":
                return self.error(403, 10000, "Authentication error")
            if kind == "malformed":
                return self.reply(200, None, raw=b"<html><body>502 Bad Gateway</body></html>")
            if kind == "hang":
                time.sleep(failure.get("seconds", 5))
                return self.error(504, 10002, "too late")
            return self.error(failure.get("status", 500), failure.get("code", 10001), failure.get("message", "Internal error"))
        with LOCK:
            self.api(method, url.path, parse_qs(url.query), body)

    def api(self, method, path, query, body):
        tunnel = f"/accounts/{ACCOUNT}/cfd_tunnel/{TUNNEL}"
        zone = f"/zones/{ZONE}"
        if method == "GET" and path == zone:
            return self.reply(200, envelope({"id": ZONE, "name": ZONE_NAME, "status": "active"}))
        if method == "GET" and path == tunnel:
            return self.reply(200, envelope({"id": TUNNEL, "name": "pando", "status": STATE["tunnel_status"],
                                             "remote_config": True, "tun_type": "cfd_tunnel"}))
        if method == "GET" and path == tunnel + "/token":
            return self.reply(200, envelope(TUNNEL_TOKEN))
        if path == tunnel + "/configurations":
            if method == "GET":
                return self.reply(200, envelope(self.configuration()))
            if method == "PUT":
                wrong = check_ingress(body)
                if wrong:
                    return self.error(400, 1055, "Validation failed: " + wrong)
                STATE["config"] = body["config"]
                STATE["version"] += 1
                return self.reply(200, envelope(self.configuration()))
        if path == zone + "/dns_records":
            if method == "GET":
                names = query.get("name", [])
                records = [r for r in STATE["dns"] if not names or r["name"] == names[0]]
                return self.reply(200, dict(envelope(records), result_info={"count": len(records), "page": 1}))
            if method == "POST":
                wrong = check_record(body)
                if wrong:
                    return self.error(400, 9005, "DNS Validation Error: " + wrong)
                if body["name"].startswith("*.") and not STATE["wildcards_allowed"]:
                    return self.error(400, 9007, "Wildcard proxied records are not allowed on this zone")
                if any(r["name"] == body["name"] for r in STATE["dns"]):
                    return self.error(400, 81053, "An A, AAAA, or CNAME record with that host already exists.")
                record = dict(body, id=uuid.uuid4().hex, proxied=body.get("proxied", False), zone_id=ZONE)
                STATE["dns"].append(record)
                return self.reply(200, envelope(record))
        if method == "DELETE" and path.startswith(zone + "/dns_records/"):
            record_id = path.rsplit("/", 1)[1]
            kept = [r for r in STATE["dns"] if r["id"] != record_id]
            if len(kept) == len(STATE["dns"]):
                return self.error(404, 81044, "Record does not exist.")
            STATE["dns"] = kept
            return self.reply(200, envelope({"id": record_id}))
        return self.error(404, 7003, f"Could not route to {path}, perhaps your object identifier is invalid?")

    def configuration(self):
        return {"tunnel_id": TUNNEL, "account_id": ACCOUNT, "version": STATE["version"],
                "config": STATE["config"], "source": "cloudflare", "created_at": "2026-12-01T00:00:00Z"}

    def control(self, method, path, body):
        with LOCK:
            if method == "GET":
                return self.reply(200, STATE)
            if path == "/__control/fail":
                STATE["failures"].append(dict({"times": 1}, **body))
            elif path == "/__control/clear":
                STATE["failures"] = []
                STATE["requests"] = []
            elif path == "/__control/state":
                STATE.update(body)
            return self.reply(200, {"ok": True})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
