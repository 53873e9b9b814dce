#!/usr/bin/env python3
"""A token server for the Docker Distribution token scheme, as Docker Hub, GHCR and Harbor run one,
for tests only, on 127.0.0.1:PORT.

    registrytokenserver.py PORT KEY.pem CERT.pem USER PASSWORD ISSUER SERVICE

A registry set up with `auth: token` answers 401 with `WWW-Authenticate: Bearer realm=...,
service=...,scope=repository:NAME:pull`; the client then asks the realm, here
`GET /token?service=SERVICE&scope=repository:NAME:pull,push` (scope repeated, space-separated or
absent; account ignored), with HTTP Basic credentials or none, and shows the registry the JWT it
gets. What this server does with such a request:
  - the right USER and PASSWORD: a token granting every action asked for, on every scope asked for
    (the one user may do anything);
  - no credentials: an anonymous token granting nothing, as the specification has a token server
    answer a client it cannot grant any of the scope to (the registry then refuses it);
  - other credentials: 401, and no token;
  - a service other than SERVICE: 400, since a client that names another is not following the
    registry's challenge.
The token is signed (ES256, or RS256 for an RSA key) with KEY, and its header carries CERT as an
`x5c` chain: the registry trusts it because CERT is also its rootcertbundle.

GET /count answers how many tokens it has issued, so that a test can tell a client that keeps its
token from one that asks for a new one on every request. Nothing is logged: nobody reads the
output but the first line, "ready".
"""
import base64
import http.server
import json
import secrets
import sys
import threading
import time
import urllib.parse

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

PORT, KEY, CERT, USER, PASSWORD, ISSUER, SERVICE = sys.argv[1:8]
LIFETIME = 300

with open(KEY, "rb") as f:
    SIGNING_KEY = serialization.load_pem_private_key(f.read(), password=None)
ALGORITHM = "ES256" if isinstance(SIGNING_KEY, ec.EllipticCurvePrivateKey) else "RS256"
with open(CERT, "rb") as f:
    # x5c holds standard (not URL-safe) base64 of each certificate's DER, leaf first.
    CHAIN = [base64.b64encode(x509.load_pem_x509_certificate(f.read()).public_bytes(serialization.Encoding.DER)).decode()]

issued = 0
issued_lock = threading.Lock()


def requested_access(scopes):
    """The access entries for scope values like "repository:team/app:pull,push". The name may hold
    a colon itself (a registry host with a port), so the actions are what follows the last one."""
    access = []
    for value in scopes:
        for scope in value.split():
            kind, _, rest = scope.partition(":")
            name, _, actions = rest.rpartition(":")
            if kind and name and actions:
                access.append({"type": kind, "name": name, "actions": actions.split(",")})
    return access


def basic_credentials(header):
    """(user, password) from an Authorization: Basic header; None when there is none."""
    scheme, _, value = (header or "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        user, _, password = base64.b64decode(value.strip(), validate=True).decode().partition(":")
    except ValueError:
        return ("", "")
    return (user, password)


class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, status, body, headers=()):
        payload = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self):
        global issued
        path, _, query = self.path.partition("?")
        if path == "/count":
            with issued_lock:
                return self.answer(200, {"issued": issued})
        if path != "/token":
            return self.answer(404, {"errors": [{"code": "NOT_FOUND", "message": path}]})
        params = urllib.parse.parse_qs(query)
        service = params.get("service", [SERVICE])[0]
        if service != SERVICE:
            return self.answer(400, {"errors": [{"code": "DENIED", "message": "unknown service " + service}]})
        credentials = basic_credentials(self.headers.get("Authorization"))
        if credentials is None:
            subject, access = "", []
        elif secrets.compare_digest(credentials[0].encode(), USER.encode()) and secrets.compare_digest(
            credentials[1].encode(), PASSWORD.encode()
        ):
            subject, access = USER, requested_access(params.get("scope", []))
        else:
            return self.answer(
                401,
                {"errors": [{"code": "UNAUTHORIZED", "message": "wrong user or password"}]},
                [("WWW-Authenticate", 'Basic realm="pando-test-token"')],
            )
        now = int(time.time())
        claims = {
            "iss": ISSUER,
            "sub": subject,
            "aud": SERVICE,
            "exp": now + LIFETIME,
            "nbf": now,
            "iat": now,
            "jti": secrets.token_urlsafe(16),
            "access": access,
        }
        token = jwt.encode(claims, SIGNING_KEY, algorithm=ALGORITHM, headers={"x5c": CHAIN})
        # Counted before it is sent: a client holding the token sees it counted.
        with issued_lock:
            issued += 1
        issued_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
        self.answer(200, {"token": token, "access_token": token, "expires_in": LIFETIME, "issued_at": issued_at})

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", int(PORT)), Handler)
print("ready", flush=True)
server.serve_forever()
