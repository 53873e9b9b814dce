#!/usr/bin/env python3
"""A local stand-in for the parts of six forges' REST APIs Pando's forge adapter uses.

Each forge answers below its own prefix, which the test gives the adapter as the API root:

  /github      GitHub REST (api.github.com)       Authorization: Bearer TOKEN, a User-Agent
  /gitlab      GitLab REST v4 (BASE/api/v4)        PRIVATE-TOKEN: TOKEN (or Authorization: Bearer TOKEN)
  /gitea       Gitea REST v1 (BASE/api/v1)         Authorization: token TOKEN
  /bitbucket   Bitbucket Cloud 2.0                 Basic USER:TOKEN (an app password), or Bearer TOKEN
  /bbdc        Bitbucket Data Center (BASE)        Authorization: Bearer TOKEN; /rest/api/1.0, /rest/build-status/1.0
  /azure/ORG   Azure DevOps (dev.azure.com/ORG)    Basic with any user and TOKEN as password; api-version=7.1

Requests and answers have the shapes the forges' API references give: the same fields, the same
status codes, the same error bodies, and each forge's paging (Link: rel="next"; X-Next-Page;
"next" in the body; isLastPage/nextPageStart; x-ms-continuationtoken). The stand-in's largest page
holds 2 items, whatever page size is asked for, as a server with a small maximum would: every
listing of the 3 repositories or 3 branches takes two pages. A request without the forge's auth
header gets that forge's 401.

Every repository has the open pull requests PULL_REQUESTS (7 and 12); a comment on another number
is that forge's 404. A comment it took can be edited at each forge's documented address (GitHub
and Gitea PATCH issues/comments/ID, GitLab PUT the note, Bitbucket Cloud PUT the comment, Data
Center PUT with the version a GET of it gives, 409 for an older one, Azure PATCH the thread's
first comment); one not there (another pull request's, or deleted) is the forge's 404. Hooks take only the events each forge documents (a misspelt one is refused
the forge's way), and Azure's subscriptions the push and pull request events.

It keeps the commit statuses, webhooks and pull request comments it was sent. Control routes (no
token):

  GET  /_standin/statuses?forge=F     the status bodies F received: [{"repo", "sha", "body"}]
  GET  /_standin/hooks?forge=F        F's hooks by repository, secrets included: {"repo": [hook]}
  GET  /_standin/hook-events?forge=F  the events F's hooks are for: {"repo": {"url": [event]}}, sorted;
                                      a second hook for a URL shows as its events twice (GitLab: the
                                      *_events flags set; Azure: each subscription's eventType)
  GET  /_standin/comments?forge=F     the comments F took: [{"repo", "number", "path", "body", "id"}],
                                      an edited one with "edits" (how many) and "edit_path"
  POST /_standin/delete-comment       {"forge", "id"}: the comment is gone, as if deleted on the forge
  GET  /_standin/requests?forge=F     the requests F received: [{"method", "path", "query"}]
  POST /_standin/seed-hook            {"forge", "repo", "url", "secret"}: a push-only hook (as an
                                      older Pando made it), in F's own shape; answers {"id"}
  POST /_standin/fail                 {"forge", "repo" ("*": every request), "status": 401|403|404|203|"hang"}
  POST /_standin/next-host            {"host"}: next-page addresses name that host instead of this one
  POST /_standin/reset                forgets statuses, hooks, comments, requests, failures and the next host
  POST /_standin/github-app           {"app_id", "public_key" (PEM), "installations": {"ID": "active" |
                                      "suspended"}, "repositories": ["acme/api", …], "token"}: GitHub takes
                                      JWTs of that app (RS256, verified with public_key: iss the app id,
                                      iat and exp as GitHub checks them) at POST
                                      /app/installations/ID/access_tokens, answers an active installation's
                                      201 {"token", "expires_at" an hour on}, a suspended one's 403, another
                                      id's 404; the token then reads like $FORGE_STANDIN_TOKEN, except that
                                      /installation/repositories lists the installation's repositories and
                                      /user/repos refuses it (403), as GitHub answers an installation token.
                                      Kept across reset; every mint is a request like the others.
  POST /_standin/oauth                {"client_id", "client_secret", "expires_in" (0: none, as GitHub's classic
                                      apps), "deny": bool}: the OAuth application every forge knows. Its
                                      authorization pages (GitHub and Gitea GET login/oauth/authorize, GitLab
                                      oauth/authorize, Bitbucket site/oauth2/authorize, below each prefix) act as
                                      the user choosing Authorize (or Deny): 302 to redirect_uri with a code and
                                      the state (or error=access_denied). The token endpoints (GitHub and Gitea
                                      login/oauth/access_token, GitLab oauth/token, Bitbucket
                                      site/oauth2/access_token; a form, the client in it or, Bitbucket, as Basic)
                                      take a code once, for the same redirect_uri and the PKCE verifier of its
                                      challenge, and a refresh token once (each grant gives a new one); the access
                                      token granted reads like $FORGE_STANDIN_TOKEN. Refusals are each forge's:
                                      GitHub 200 with "error" (bad_verification_code, incorrect_client_credentials,
                                      bad_refresh_token), the others 400 invalid_grant and 401 invalid_client.
  POST /_standin/oauth-revoke         the refresh tokens granted so far stop working (the user revoked the app)

The token comes from $FORGE_STANDIN_TOKEN and Bitbucket Cloud's user from $FORGE_STANDIN_USER,
never argv. Prints "port N" once it listens on 127.0.0.1 (any free port).
"""

import base64
import hashlib
import json
import jwt
import os
import re
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, quote, unquote, urlencode, urlsplit

TOKEN = os.environ["FORGE_STANDIN_TOKEN"]
BB_USER = os.environ.get("FORGE_STANDIN_USER", "jdoe")
PAGE = 2


def sha(text):
    return hashlib.sha1(text.encode()).hexdigest()


BRANCHES = [("main", sha("main")), ("feature/x", sha("feature/x")), ("release", sha("release"))]
TAGS = [("v1.0", sha("v1.0"), sha("tag object v1.0"))]  # name, commit, annotated tag object
COMMITS = {c for _, c in BRANCHES} | {t[1] for t in TAGS}
# name, private, default branch
REPOS = [("api", True, "main"), ("web", False, "trunk"), ("tools", True, "main")]
NAMES = {
    "github": ["acme/api", "acme/web", "acme/tools"],
    "gitea": ["acme/api", "acme/web", "acme/tools"],
    "gitlab": ["acme/platform/api", "acme/web", "acme/tools"],
    "bitbucket": ["acme/api", "acme/web", "acme/tools"],
    "bbdc": ["ACME/api", "ACME/web", "ACME/tools"],
    "azure": ["shop/api", "shop/web", "shop/tools"],
}
AZURE_PROJECT_ID = "6ce954b1-ce1f-45d1-b94d-e6bf2464ba2c"
PULL_REQUESTS = (7, 12)
# The events a hook may name, as each forge's reference lists them (those Pando might ask for).
HOOK_EVENTS = {
    "github": {"push", "pull_request", "pull_request_review", "issue_comment", "create", "delete", "release",
               "status", "check_run", "workflow_run", "*"},
    "gitea": {"push", "pull_request", "pull_request_sync", "pull_request_comment", "create", "delete", "release",
              "issues", "issue_comment"},
    "bitbucket": {"repo:push", "repo:updated", "repo:commit_status_created", "repo:commit_status_updated",
                  "pullrequest:created", "pullrequest:updated", "pullrequest:approved", "pullrequest:unapproved",
                  "pullrequest:fulfilled", "pullrequest:rejected", "pullrequest:comment_created",
                  "pullrequest:changes_request_created", "pullrequest:changes_request_removed"},
    "bbdc": {"repo:refs_changed", "repo:modified", "repo:forked", "repo:comment:added", "pr:opened",
             "pr:from_ref_updated", "pr:to_ref_updated", "pr:modified", "pr:merged", "pr:declined", "pr:deleted",
             "pr:reviewer:updated", "pr:reviewer:approved", "pr:comment:added"},
    "azure": {"git.push", "git.pullrequest.created", "git.pullrequest.updated", "git.pullrequest.merged"},
}
GITLAB_HOOK_FLAGS = ("push_events", "tag_push_events", "merge_requests_events", "note_events", "issues_events",
                     "pipeline_events", "job_events", "releases_events")
GITLAB_TRANSITIONS = {"pending": "enqueue", "running": "run", "success": "success", "failed": "drop",
                      "canceled": "cancel"}

LOCK = threading.Lock()
STATE = {"statuses": {}, "hooks": {}, "comments": {}, "requests": {}, "failures": [], "next_id": 1, "next_host": "",
         "github_app": None, "oauth": None, "oauth_codes": {}, "oauth_refresh": set()}

# Each forge's OAuth pages below its prefix: (authorization page, token endpoint).
OAUTH_PATHS = {"github": ("login/oauth/authorize", "login/oauth/access_token"),
               "gitlab": ("oauth/authorize", "oauth/token"),
               "gitea": ("login/oauth/authorize", "login/oauth/access_token"),
               "bitbucket": ("site/oauth2/authorize", "site/oauth2/access_token")}


def oauth(request, forge, method, path, body):
    """One request to forge's OAuth pages: the user's choice on the authorization page, or a grant."""
    app = STATE["oauth"] or {}
    authorize, token = OAUTH_PATHS[forge]
    if method == "GET" and path == authorize:
        q = request.query
        if not app or q.get("client_id") != app["client_id"]:
            raise Answer(404, raw=b"<p>This application is not registered.</p>", headers={"Content-Type": "text/html"})
        redirect = q.get("redirect_uri", "")
        separator = "&" if "?" in redirect else "?"
        if app.get("deny"):
            raise Answer(302, headers={"Location": redirect + separator + urlencode(
                {"error": "access_denied", "error_description": "The user denied the request", "state": q.get("state", "")})})
        code = uuid.uuid4().hex
        STATE["oauth_codes"][code] = {"redirect_uri": redirect, "challenge": q.get("code_challenge", ""),
                                      "method": q.get("code_challenge_method", ""), "scope": q.get("scope", "")}
        raise Answer(302, headers={"Location": redirect + separator + urlencode({"code": code, "state": q.get("state", "")})})
    if method != "POST" or path != token:
        raise Answer(404, {"message": "Not Found"})
    form = body if isinstance(body, dict) else {}
    github = forge == "github"

    def refuse(error, description, status):
        raise Answer(200 if github else status, {"error": error, "error_description": description})

    client_id, secret = form.get("client_id"), form.get("client_secret")
    auth = request.headers.get("Authorization", "")
    if forge == "bitbucket" and auth.startswith("Basic "):
        client_id, _, secret = base64.b64decode(auth[6:]).decode().partition(":")
    if not app or client_id != app["client_id"] or secret != app["client_secret"]:
        refuse("incorrect_client_credentials" if github else "invalid_client",
               "The client_id and/or client_secret passed are incorrect.", 401)
    grant = form.get("grant_type")
    if grant == "authorization_code":
        held = STATE["oauth_codes"].pop(form.get("code", ""), None)
        verifier = form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        if not held or held["redirect_uri"] != form.get("redirect_uri") or held["method"] != "S256" \
                or held["challenge"] != challenge:
            refuse("bad_verification_code" if github else "invalid_grant",
                   "The code passed is incorrect or expired.", 400)
    elif grant == "refresh_token":
        if form.get("refresh_token", "") not in STATE["oauth_refresh"]:
            refuse("bad_refresh_token" if github else "invalid_grant",
                   "The refresh token passed is incorrect or expired.", 400)
        STATE["oauth_refresh"].discard(form["refresh_token"])
    else:
        refuse("unsupported_grant_type", "grant_type must be authorization_code or refresh_token", 400)
    answer = {"access_token": TOKEN, "token_type": "bearer", "scope": "repo"}
    if app.get("expires_in"):
        refresh = "r1_" + uuid.uuid4().hex
        STATE["oauth_refresh"].add(refresh)
        answer.update({"expires_in": app["expires_in"], "refresh_token": refresh})
    raise Answer(200, answer)


def repo_info(forge, name):
    """(private, default branch) of a known repository, or None."""
    if name not in NAMES[forge]:
        return None
    _, private, default = REPOS[NAMES[forge].index(name)]
    return private, default


def repo_guid(name):
    return str(uuid.uuid5(uuid.NAMESPACE_URL, "azure/" + name))


def next_id():
    STATE["next_id"] += 1
    return STATE["next_id"]


def hooks_of(forge, repo):
    return STATE["hooks"].setdefault(forge, {}).setdefault(repo, [])


def record_status(forge, repo, sha_, body):
    STATE["statuses"].setdefault(forge, []).append({"repo": repo, "sha": sha_, "body": body})


def record_comment(forge, repo, number, path, body):
    """Keeps a comment the forge took; its id."""
    comment_id = next_id()
    STATE["comments"].setdefault(forge, []).append(
        {"repo": repo, "number": number, "path": path, "body": body, "id": comment_id})
    return comment_id


def find_comment(forge, repo, number, comment_id):
    """The comment forge took on repo's pull request number (any, when None) as comment_id, or None."""
    for comment in STATE["comments"].get(forge, []):
        if (str(comment["id"]) == str(comment_id) and comment["repo"] == repo
                and (number is None or comment["number"] == number)):
            return comment
    return None


def edit_comment(comment, path, body):
    """comment's body replaced by an edit sent to path."""
    comment.update(body=body, edits=comment.get("edits", 0) + 1, edit_path=path)
    return comment


def pull_request(number):
    """The pull request number names, or None (a path segment that is not one, a number not open)."""
    return int(number) if re.fullmatch(r"[0-9]+", number) and int(number) in PULL_REQUESTS else None


def events_of(forge, hook):
    """The events hook is for, as the hook-events route shows them."""
    if forge == "gitlab":
        return [k for k in GITLAB_HOOK_FLAGS if hook.get(k)]
    if forge == "azure":
        return [hook.get("eventType")]
    return list(hook.get("events") or [])


def url_of(forge, hook):
    if forge in ("github", "gitea"):
        return (hook.get("config") or {}).get("url")
    if forge == "azure":
        return (hook.get("consumerInputs") or {}).get("url")
    return hook.get("url")


def hook_events(forge):
    shown = {}
    for repo, hooks in STATE["hooks"].get(forge, {}).items():
        if forge == "azure" and repo == "*":
            continue
        by_url = shown.setdefault(repo, {})
        for hook in hooks:
            by_url.setdefault(url_of(forge, hook), []).extend(events_of(forge, hook))
    for by_url in shown.values():
        for events in by_url.values():
            events.sort()
    return shown


def seed_hook(forge, repo, url, secret):
    """A push-only hook for url on repo, in forge's shape, as an older Pando registered it; its id."""
    hook_id = next_id()
    if forge == "github":
        hook = {"id": hook_id, "name": "web", "active": True, "events": ["push"],
                "config": {"url": url, "content_type": "json", "secret": secret, "insecure_ssl": "0"}}
    elif forge == "gitea":
        hook = {"id": hook_id, "type": "gitea", "active": True, "events": ["push"],
                "config": {"url": url, "content_type": "json", "secret": secret}}
    elif forge == "gitlab":
        hook = {"id": hook_id, "url": url, "token": secret, "push_events": True, "merge_requests_events": False,
                "tag_push_events": False, "enable_ssl_verification": True,
                "project_id": NAMES["gitlab"].index(repo) + 1}
    elif forge == "bitbucket":
        hook_id = "{" + str(uuid.uuid4()) + "}"
        hook = {"uuid": hook_id, "description": "Pando", "url": url, "active": True, "secret": secret,
                "events": ["repo:push"], "subject_type": "repository"}
    elif forge == "bbdc":
        hook = {"id": hook_id, "name": "Pando", "url": url, "active": True, "events": ["repo:refs_changed"],
                "configuration": {"secret": secret}}
    elif forge == "azure":
        hook_id = str(uuid.uuid4())
        hook = {"id": hook_id, "status": "enabled", "publisherId": "tfs", "eventType": "git.push",
                "resourceVersion": "1.0", "consumerId": "webHooks", "consumerActionId": "httpRequest",
                "publisherInputs": {"projectId": AZURE_PROJECT_ID, "repository": repo_guid(repo)},
                "consumerInputs": {"url": url, "basicAuthUsername": "pando", "basicAuthPassword": secret,
                                   "resourceDetailsToSend": "all"}}
        hooks_of("azure", "*").append(hook)
    else:
        raise Answer(400, {"message": "no such forge here"})
    hooks_of(forge, repo).append(hook)
    return hook_id


class Answer(Exception):
    """Ends a request with status and JSON body (or raw bytes), extra headers."""

    def __init__(self, status, body=None, headers=None, raw=None):
        super().__init__(status)
        self.status, self.body, self.headers, self.raw = status, body, headers or {}, raw


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def send(self, status, body=None, headers=None, raw=None):
        data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
        self.send_response(status)
        if raw is None and body is not None:
            self.send_header("Content-Type", "application/json")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        if self.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded"):
            return {k: v[0] for k, v in parse_qs(raw.decode(), keep_blank_values=True).items()}
        try:
            return json.loads(raw)
        except ValueError:
            raise Answer(400, {"message": "Problems parsing JSON"})

    def dispatch(self, method):
        url = urlsplit(self.path)
        self.query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        # Raw segments, decoded one by one: "acme%2Fapi" is one segment (GitLab's project id).
        self.segments = [unquote(s) for s in url.path.split("/") if s]
        self.url = url
        try:
            body = self.read_body()
            if url.path.startswith("/_standin/"):
                return self.control(method, url.path, body)
            forge = self.segments[0] if self.segments else ""
            handler = {"github": GitHub, "gitlab": GitLab, "gitea": Gitea, "bitbucket": BitbucketCloud,
                       "bbdc": BitbucketDc, "azure": Azure}.get(forge)
            if not handler:
                raise Answer(404, {"message": "no such forge here"})
            with LOCK:
                STATE["requests"].setdefault(forge, []).append(
                    {"method": method, "path": url.path, "query": url.query})
                rest = "/".join(self.segments[1:])
                if forge in OAUTH_PATHS and rest in OAUTH_PATHS[forge]:
                    oauth(self, forge, method, rest, body)
            api = handler(self, method, body)
            api.authenticate()
            repo = api.repo_key()
            with LOCK:
                failure = next((f for f in STATE["failures"]
                                if f["forge"] == forge and f["repo"] in ("*", repo)), None)
            if failure:
                if failure["status"] == "hang":
                    time.sleep(30)
                    raise Answer(504, {"message": "too late"})
                api.fail(int(failure["status"]))
            with LOCK:
                api.handle()
            raise Answer(404, api.error_body(404, "Not Found"))
        except Answer as a:
            self.send(a.status, a.body, a.headers, a.raw)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def control(self, method, path, body):
        forge = self.query.get("forge", "")
        with LOCK:
            if method == "GET" and path == "/_standin/statuses":
                raise Answer(200, STATE["statuses"].get(forge, []))
            if method == "GET" and path == "/_standin/hooks":
                raise Answer(200, STATE["hooks"].get(forge, {}))
            if method == "GET" and path == "/_standin/hook-events":
                raise Answer(200, hook_events(forge))
            if method == "GET" and path == "/_standin/comments":
                raise Answer(200, STATE["comments"].get(forge, []))
            if method == "POST" and path == "/_standin/delete-comment":
                comments = STATE["comments"].get(body["forge"], [])
                comments[:] = [c for c in comments if str(c["id"]) != str(body["id"])]
                raise Answer(200, {"ok": True})
            if method == "POST" and path == "/_standin/seed-hook":
                raise Answer(200, {"id": seed_hook(body["forge"], body["repo"], body["url"], body["secret"])})
            if method == "GET" and path == "/_standin/requests":
                raise Answer(200, STATE["requests"].get(forge, []))
            if method == "POST" and path == "/_standin/fail":
                STATE["failures"].append(body)
                raise Answer(200, {"ok": True})
            if method == "POST" and path == "/_standin/next-host":
                STATE["next_host"] = body["host"]
                raise Answer(200, {"ok": True})
            if method == "POST" and path == "/_standin/github-app":
                STATE["github_app"] = body
                raise Answer(200, {"ok": True})
            if method == "POST" and path == "/_standin/oauth":
                STATE["oauth"] = body
                raise Answer(200, {"ok": True})
            if method == "POST" and path == "/_standin/oauth-revoke":
                STATE["oauth_refresh"].clear()
                raise Answer(200, {"ok": True})
            if method == "POST" and path == "/_standin/reset":
                STATE.update({"statuses": {}, "hooks": {}, "comments": {}, "requests": {}, "failures": [],
                              "next_host": ""})
                raise Answer(200, {"ok": True})
        raise Answer(404, {"message": "no such control route"})


class Forge:
    """One forge's routes. self.s: the path's segments after the forge's prefix."""

    prefix = 1

    def __init__(self, request, method, body):
        self.r, self.method, self.body = request, method, body
        self.s = request.segments[self.prefix:]
        self.q = request.query

    def header(self, name):
        return self.r.headers.get(name, "")

    def base_url(self):
        return "http://" + (STATE["next_host"] or self.header("Host")) + "/" + "/".join(quote(s, safe="") for s in self.r.segments[:self.prefix])

    def match(self, method, pattern):
        """The segments' captures when the request is method on pattern ("repos/*/*/hooks", "**": the rest)."""
        if method != self.method:
            return None
        parts, captures = pattern.split("/"), []
        for i, part in enumerate(parts):
            if part == "**":
                if i >= len(self.s):
                    return None
                captures.append("/".join(self.s[i:]))
                return captures
            if i >= len(self.s):
                return None
            if part == "*":
                captures.append(self.s[i])
            elif part != self.s[i]:
                return None
        return captures if len(parts) == len(self.s) else None

    def page(self, items, index):
        """items[index*PAGE:...] and whether there is a page after it."""
        start = index * PAGE
        return items[start:start + PAGE], start + PAGE < len(items)

    def next_url(self, **changes):
        query = dict(self.q)
        query.update({k: str(v) for k, v in changes.items()})
        return self.base_url() + "/" + "/".join(quote(s, safe="") for s in self.s) + "?" + urlencode(query)

    def fail(self, status):
        raise Answer(status, self.error_body(status, {401: "Bad credentials", 403: "Forbidden",
                                                      404: "Not Found"}.get(status, "failure")))

    def error_body(self, status, message):
        return {"message": message}

    def repo_key(self):
        return None

    def require(self, condition, message, status=422):
        if not condition:
            raise Answer(status, self.error_body(status, message))

    def require_events(self, forge, events, status=400):
        """A hook's events: a list of names forge knows."""
        unknown = [e for e in events or [] if e not in HOOK_EVENTS[forge]]
        self.require(isinstance(events, list) and not unknown, f"Invalid event(s): {', '.join(map(str, unknown))}",
                     status)


class GitHub(Forge):
    def fail(self, status):
        if status == 403:
            raise Answer(403, {"message": "Resource not accessible by personal access token",
                               "documentation_url": "https://docs.github.com/rest"})
        super().fail(status)

    def authenticate(self):
        if not self.header("User-Agent"):
            raise Answer(403, {"message": "Request forbidden by administrative rules. Please make sure your "
                                          "request has a User-Agent header"})
        self.installation = False
        if self.match("POST", "app/installations/*/access_tokens") is not None:
            return self.authenticate_app()
        app = STATE["github_app"]
        if app and app.get("token") and self.header("Authorization") == "Bearer " + app["token"]:
            self.installation = True
            return
        if self.header("Authorization") != "Bearer " + TOKEN:
            raise Answer(401, {"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest"})

    def authenticate_app(self):
        """The app's JWT, checked as GitHub checks it."""
        app, auth = STATE["github_app"], self.header("Authorization")
        refused = Answer(401, {"message": "A JSON web token could not be decoded",
                               "documentation_url": "https://docs.github.com/rest"})
        if not app or not auth.startswith("Bearer "):
            raise refused
        try:
            claims = jwt.decode(auth[len("Bearer "):], app["public_key"], algorithms=["RS256"],
                                options={"require": ["iat", "exp", "iss"]})
        except jwt.PyJWTError:
            raise refused
        if str(claims["iss"]) != str(app["app_id"]):
            raise refused  # the key is not that app's: GitHub cannot verify the token
        if claims["iat"] > time.time():
            raise Answer(401, {"message": "'Issued at' claim ('iat') must be an Integer representing a time in "
                                          "the past.", "documentation_url": "https://docs.github.com/rest"})
        if claims["exp"] - claims["iat"] > 600:
            raise Answer(401, {"message": "'Expiration time' claim ('exp') is too far in the future",
                               "documentation_url": "https://docs.github.com/rest"})

    def repo_key(self):
        return "/".join(self.s[1:3]) if self.s[:1] == ["repos"] else None

    def repo_json(self, name):
        private, default = repo_info("github", name)
        return {"id": NAMES["github"].index(name) + 1, "name": name.split("/")[1], "full_name": name,
                "owner": {"login": name.split("/")[0], "type": "Organization"}, "private": private,
                "html_url": "https://github.com/" + name, "clone_url": f"https://github.com/{name}.git",
                "ssh_url": f"git@github.com:{name}.git", "default_branch": default}

    def paged(self, items):
        page = int(self.q.get("page", "1"))
        items, more = self.page(items, page - 1)
        headers = {}
        if more:
            headers["Link"] = f'<{self.next_url(page=page + 1)}>; rel="next", <{self.next_url(page=2)}>; rel="last"'
        raise Answer(200, items, headers)

    def handle(self):
        if (m := self.match("POST", "app/installations/*/access_tokens")) is not None:
            state = (STATE["github_app"].get("installations") or {}).get(m[0])
            if state is None:
                raise Answer(404, {"message": "Not Found",
                                   "documentation_url": "https://docs.github.com/rest/apps/apps"})
            if state == "suspended":
                raise Answer(403, {"message": "This installation has been suspended",
                                   "documentation_url": "https://docs.github.com/rest/apps/apps"})
            expires = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
            raise Answer(201, {"token": STATE["github_app"]["token"], "expires_at": expires,
                               "permissions": {"contents": "read", "metadata": "read"},
                               "repository_selection": "selected"})
        if self.match("GET", "installation/repositories") is not None:
            if not self.installation:
                raise Answer(403, {"message": "You must authenticate with an installation access token in order "
                                              "to list repositories for an installation.",
                                   "documentation_url": "https://docs.github.com/rest/apps/installations"})
            names = STATE["github_app"].get("repositories") or NAMES["github"]
            page = int(self.q.get("page", "1"))
            items, more = self.page([self.repo_json(n) for n in names], page - 1)
            headers = {}
            if more:
                headers["Link"] = f'<{self.next_url(page=page + 1)}>; rel="next"'
            raise Answer(200, {"total_count": len(names), "repositories": items}, headers)
        if self.match("GET", "user/repos") is not None:
            if self.installation:
                raise Answer(403, {"message": "Resource not accessible by integration",
                                   "documentation_url": "https://docs.github.com/rest/repos/repos"})
            self.paged([self.repo_json(n) for n in NAMES["github"]])
        if (m := self.match("GET", "orgs/*/repos")) is not None:
            names = [n for n in NAMES["github"] if n.split("/")[0] == m[0]]
            if not names:
                raise Answer(404, {"message": "Not Found"})
            self.paged([self.repo_json(n) for n in names])
        m = self.match(self.method, "repos/*/*/**") or self.match(self.method, "repos/*/*")
        if m is None:
            return
        name = m[0] + "/" + m[1]
        if not repo_info("github", name):
            raise Answer(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"})
        rest = self.s[3:]
        if self.match("GET", "repos/*/*") is not None:
            raise Answer(200, self.repo_json(name))
        if self.match("GET", "repos/*/*/branches") is not None:
            self.paged([{"name": b, "commit": {"sha": c}, "protected": False} for b, c in BRANCHES])
        if (m := self.match("GET", "repos/*/*/commits/**")) is not None:
            ref = m[2]
            found = {b: c for b, c in BRANCHES} | {"heads/" + b: c for b, c in BRANCHES} | \
                {t[0]: t[1] for t in TAGS} | {"tags/" + t[0]: t[1] for t in TAGS} | {c: c for c in COMMITS}
            if ref not in found:
                raise Answer(422, {"message": f"No commit found for SHA: {ref}"})
            raise Answer(200, {"sha": found[ref], "commit": {"message": "a commit"}})
        if (m := self.match("POST", "repos/*/*/statuses/*")) is not None:
            b = self.body or {}
            self.require(re.fullmatch(r"[0-9a-f]{40}", m[2]), f"No commit found for SHA: {m[2]}")
            self.require(b.get("state") in ("error", "failure", "pending", "success"), "Validation Failed")
            self.require(len(b.get("description", "")) <= 140, "description is too long (maximum is 140 characters)")
            record_status("github", name, m[2], b)
            raise Answer(201, dict(b, id=next_id(), url="status"))
        if (m := self.match("POST", "repos/*/*/issues/*/comments")) is not None:
            # A pull request is an issue: its number takes issue comments.
            number = pull_request(m[2])
            if number is None:
                raise Answer(404, {"message": "Not Found",
                                   "documentation_url": "https://docs.github.com/rest/issues/comments"})
            text = (self.body or {}).get("body")
            if not isinstance(text, str) or not text.strip():
                raise Answer(422, {"message": "Validation Failed", "errors": [
                    {"resource": "IssueComment", "code": "missing_field", "field": "body"}]})
            if len(text) > 65536:
                raise Answer(422, {"message": "Validation Failed", "errors": [
                    {"resource": "IssueComment", "code": "unprocessable", "field": "data",
                     "message": "Body is too long (maximum is 65536 characters)"}]})
            comment_id = record_comment("github", name, number, self.r.url.path, self.body)
            raise Answer(201, {"id": comment_id, "node_id": f"IC_{comment_id}", "body": text,
                               "html_url": f"https://github.com/{name}/pull/{number}#issuecomment-{comment_id}",
                               "issue_url": f"https://api.github.com/repos/{name}/issues/{number}",
                               "user": {"login": "pando-bot"}})
        if (m := self.match("PATCH", "repos/*/*/issues/comments/*")) is not None:
            # An issue comment is edited by its id alone; the issue is not in the path.
            comment = find_comment("github", name, None, m[2])
            if comment is None:
                raise Answer(404, {"message": "Not Found",
                                   "documentation_url": "https://docs.github.com/rest/issues/comments"})
            text = (self.body or {}).get("body")
            self.require(isinstance(text, str) and text.strip() and len(text) <= 65536, "Validation Failed")
            edit_comment(comment, self.r.url.path, self.body)
            raise Answer(200, {"id": comment["id"], "body": text, "user": {"login": "pando-bot"}})
        if rest == ["hooks"] and self.method == "GET":
            self.paged([self.hook_json(h) for h in hooks_of("github", name)])
        if rest == ["hooks"] and self.method == "POST":
            b = self.body or {}
            config = b.get("config") or {}
            if "events" in b:
                self.require_events("github", b["events"], 422)
            self.require(b.get("name", "web") == "web", "Validation Failed")
            self.require(config.get("url"), "Validation Failed")
            self.require(config.get("content_type") in ("json", "form"), "Validation Failed")
            if any(h["config"]["url"] == config["url"] for h in hooks_of("github", name)):
                raise Answer(422, {"message": "Validation Failed", "errors": [
                    {"resource": "Hook", "code": "custom", "message": "Hook already exists on this repository"}]})
            hook = {"id": next_id(), "name": "web", "active": b.get("active", True),
                    "events": b.get("events", ["push"]), "config": config}
            hooks_of("github", name).append(hook)
            raise Answer(201, self.hook_json(hook))
        if len(rest) == 2 and rest[0] == "hooks" and self.method == "PATCH":
            hook = next((h for h in hooks_of("github", name) if str(h["id"]) == rest[1]), None)
            if not hook:
                raise Answer(404, {"message": "Not Found"})
            b = self.body or {}
            if "events" in b:
                self.require_events("github", b["events"], 422)
            if "config" in b:
                hook["config"] = b["config"]  # replaced whole, as GitHub documents
            hook.update({k: b[k] for k in ("events", "active") if k in b})
            raise Answer(200, self.hook_json(hook))

    @staticmethod
    def hook_json(hook):
        config = dict(hook["config"])
        if "secret" in config:
            config["secret"] = "********"
        return dict(hook, config=config, type="Repository")


class Gitea(Forge):
    def authenticate(self):
        if self.header("Authorization") != "token " + TOKEN:
            raise Answer(401, {"message": "token is required", "url": "https://gitea.example/api/swagger"})

    def repo_key(self):
        return "/".join(self.s[1:3]) if self.s[:1] == ["repos"] else None

    def error_body(self, status, message):
        return {"message": message, "url": "https://gitea.example/api/swagger"}

    def repo_json(self, name):
        private, default = repo_info("gitea", name)
        return {"id": NAMES["gitea"].index(name) + 1, "full_name": name, "private": private,
                "owner": {"login": name.split("/")[0]},
                "html_url": "https://gitea.example/" + name, "clone_url": f"https://gitea.example/{name}.git",
                "ssh_url": f"git@gitea.example:{name}.git", "default_branch": default}

    def paged(self, items):
        page = int(self.q.get("page", "1"))
        total = len(items)
        items, more = self.page(items, page - 1)
        headers = {"X-Total-Count": str(total)}
        if more:
            headers["Link"] = f'<{self.next_url(page=page + 1)}>; rel="next"'
        raise Answer(200, items, headers)

    def handle(self):
        if self.match("GET", "user/repos") is not None:
            self.paged([self.repo_json(n) for n in NAMES["gitea"]])
        for pattern in ("orgs/*/repos", "users/*/repos"):
            if (m := self.match("GET", pattern)) is not None:
                names = [n for n in NAMES["gitea"] if n.split("/")[0] == m[0]]
                if not names:
                    raise Answer(404, self.error_body(404, "GetOrgByName"))
                self.paged([self.repo_json(n) for n in names])
        m = self.match(self.method, "repos/*/*/**") or self.match(self.method, "repos/*/*")
        if m is None:
            return
        name = m[0] + "/" + m[1]
        if not repo_info("gitea", name):
            raise Answer(404, self.error_body(404, "The target couldn't be found."))
        rest = self.s[3:]
        if self.match("GET", "repos/*/*") is not None:
            raise Answer(200, self.repo_json(name))
        if self.match("GET", "repos/*/*/branches") is not None:
            self.paged([{"name": b, "commit": {"id": c, "message": "a commit"}} for b, c in BRANCHES])
        if (m := self.match("GET", "repos/*/*/branches/**")) is not None:
            found = dict(BRANCHES).get(m[2])
            if not found:
                raise Answer(404, self.error_body(404, "The target couldn't be found."))
            raise Answer(200, {"name": m[2], "commit": {"id": found}})
        if (m := self.match("GET", "repos/*/*/tags/**")) is not None:
            tag = next((t for t in TAGS if t[0] == m[2]), None)
            if not tag:
                raise Answer(404, self.error_body(404, "The target couldn't be found."))
            raise Answer(200, {"name": tag[0], "id": tag[2], "commit": {"sha": tag[1]}})
        if (m := self.match("GET", "repos/*/*/git/commits/*")) is not None:
            if not re.fullmatch(r"[0-9a-f]{7,64}", m[2]):
                raise Answer(422, self.error_body(422, "no valid ref or sha: " + m[2]))
            full = next((c for c in COMMITS if c.startswith(m[2])), None)
            if not full:
                raise Answer(404, self.error_body(404, "object does not exist"))
            raise Answer(200, {"sha": full})
        if (m := self.match("POST", "repos/*/*/statuses/*")) is not None:
            b = self.body or {}
            self.require(b.get("state") in ("pending", "success", "error", "failure", "warning"), "invalid state")
            record_status("gitea", name, m[2], b)
            raise Answer(201, dict(b, id=next_id(), status=b["state"]))
        if (m := self.match("POST", "repos/*/*/issues/*/comments")) is not None:
            # Pull requests are numbered among issues and take issue comments.
            number = pull_request(m[2])
            if number is None:
                raise Answer(404, self.error_body(404, "The target couldn't be found."))
            text = (self.body or {}).get("body")
            self.require(isinstance(text, str) and text.strip(), "[Body]: Required")
            comment_id = record_comment("gitea", name, number, self.r.url.path, self.body)
            raise Answer(201, {"id": comment_id, "body": text, "user": {"login": "pando-bot"},
                               "html_url": f"https://gitea.example/{name}/pulls/{number}#issuecomment-{comment_id}",
                               "pull_request_url": f"https://gitea.example/{name}/pulls/{number}",
                               "issue_url": ""})
        if (m := self.match("PATCH", "repos/*/*/issues/comments/*")) is not None:
            comment = find_comment("gitea", name, None, m[2])
            if comment is None:
                raise Answer(404, self.error_body(404, "The target couldn't be found."))
            text = (self.body or {}).get("body")
            self.require(isinstance(text, str) and text.strip(), "[Body]: Required")
            edit_comment(comment, self.r.url.path, self.body)
            raise Answer(200, {"id": comment["id"], "body": text, "user": {"login": "pando-bot"}})
        if rest == ["hooks"] and self.method == "GET":
            self.paged([self.hook_json(h) for h in hooks_of("gitea", name)])
        if rest == ["hooks"] and self.method == "POST":
            b = self.body or {}
            config = b.get("config") or {}
            if "events" in b:
                self.require_events("gitea", b["events"], 422)
            self.require(b.get("type") in ("gitea", "forgejo", "gogs", "slack"), "Invalid hook type")
            self.require(config.get("url") and config.get("content_type") in ("json", "form"),
                         "Missing config option: url, content_type")
            hook = {"id": next_id(), "type": b["type"], "active": b.get("active", False),
                    "events": b.get("events", ["push"]), "config": config}
            hooks_of("gitea", name).append(hook)  # Gitea takes a second hook for a URL it has
            raise Answer(201, self.hook_json(hook))
        if len(rest) == 2 and rest[0] == "hooks" and self.method == "PATCH":
            hook = next((h for h in hooks_of("gitea", name) if str(h["id"]) == rest[1]), None)
            if not hook:
                raise Answer(404, self.error_body(404, "The target couldn't be found."))
            b = self.body or {}
            if "events" in b:
                self.require_events("gitea", b["events"], 422)
            hook["config"].update(b.get("config") or {})
            hook.update({k: b[k] for k in ("events", "active") if k in b})
            raise Answer(200, self.hook_json(hook))

    @staticmethod
    def hook_json(hook):
        return dict(hook, config={k: v for k, v in hook["config"].items() if k != "secret"})


class GitLab(Forge):
    def authenticate(self):
        if self.header("PRIVATE-TOKEN") != TOKEN and self.header("Authorization") != "Bearer " + TOKEN:
            raise Answer(401, {"message": "401 Unauthorized"})

    def repo_key(self):
        return self.s[1] if self.s[:1] == ["projects"] and len(self.s) > 1 else None

    def fail(self, status):
        raise Answer(status, {"message": {401: "401 Unauthorized", 403: "403 Forbidden",
                                          404: "404 Project Not Found"}.get(status, "failure")})

    def project_json(self, name):
        private, default = repo_info("gitlab", name)
        return {"id": NAMES["gitlab"].index(name) + 1, "path_with_namespace": name, "name": name.split("/")[-1],
                "visibility": "private" if private else "public", "default_branch": default,
                "web_url": "https://gitlab.example/" + name,
                "http_url_to_repo": f"https://gitlab.example/{name}.git",
                "ssh_url_to_repo": f"git@gitlab.example:{name}.git"}

    def paged(self, items):
        page = int(self.q.get("page", "1"))
        total = len(items)
        items, more = self.page(items, page - 1)
        headers = {"X-Page": str(page), "X-Per-Page": str(PAGE), "X-Total": str(total),
                   "X-Total-Pages": str((total + PAGE - 1) // PAGE), "X-Next-Page": str(page + 1) if more else ""}
        if more:
            headers["Link"] = f'<{self.next_url(page=page + 1)}>; rel="next"'
        raise Answer(200, items, headers)

    def handle(self):
        if self.match("GET", "projects") is not None:
            self.require(self.q.get("membership") == "true", "this stand-in lists memberships only", 400)
            self.paged([self.project_json(n) for n in NAMES["gitlab"]])
        if (m := self.match("GET", "groups/*/projects")) is not None:
            names = [n for n in NAMES["gitlab"] if n.startswith(m[0] + "/")]
            if not names:
                raise Answer(404, {"message": "404 Group Not Found"})
            if self.q.get("include_subgroups") != "true":
                names = [n for n in names if n.count("/") == m[0].count("/") + 1]
            self.paged([self.project_json(n) for n in names])
        if self.s[:1] != ["projects"] or len(self.s) < 2:
            return
        name = self.s[1]
        if not repo_info("gitlab", name):
            raise Answer(404, {"message": "404 Project Not Found"})
        rest = self.s[2:]
        if self.match("GET", "projects/*") is not None:
            raise Answer(200, self.project_json(name))
        if self.match("GET", "projects/*/repository/branches") is not None:
            self.paged([{"name": b, "commit": {"id": c, "short_id": c[:8]}, "default": b == "main"}
                        for b, c in BRANCHES])
        if (m := self.match("GET", "projects/*/repository/commits/*")) is not None:
            # A revision as git reads it: a name, refs/heads/NAME, refs/tags/NAME (peeled) or an id.
            found = dict(BRANCHES) | {"refs/heads/" + b: c for b, c in BRANCHES} | \
                {t[0]: t[1] for t in TAGS} | {"refs/tags/" + t[0]: t[1] for t in TAGS} | {c: c for c in COMMITS}
            if m[1] not in found:
                raise Answer(404, {"message": "404 Commit Not Found"})
            raise Answer(200, {"id": found[m[1]], "short_id": found[m[1]][:8]})
        if (m := self.match("POST", "projects/*/statuses/*")) is not None:
            b = self.body or {}
            state = b.get("state")
            if state not in GITLAB_TRANSITIONS:
                raise Answer(400, {"error": "state does not have a valid value"})
            context = b.get("name", b.get("context", "default"))
            earlier = [s for s in STATE["statuses"].get("gitlab", [])
                       if s["sha"] == m[1] and s["body"].get("name", "default") == context]
            if earlier and earlier[-1]["body"]["state"] == state:
                raise Answer(400, {"message": f"Cannot transition status via :{GITLAB_TRANSITIONS[state]} from "
                                              f":{state} (Reason(s): Status cannot transition via "
                                              f"\"{GITLAB_TRANSITIONS[state]}\")"})
            record_status("gitlab", name, m[1], b)
            raise Answer(201, {"id": next_id(), "sha": m[1], "status": state, "name": context})
        if (m := self.match("POST", "projects/*/merge_requests/*/notes")) is not None:
            # The number is the merge request's iid within the project.
            number = pull_request(m[1])
            if number is None:
                raise Answer(404, {"message": "404 Not found"})
            text = (self.body or {}).get("body")
            if not isinstance(text, str) or not text.strip():
                raise Answer(400, {"message": "400 Bad request - Note {:note=>[\"can't be blank\"]}"})
            if len(text) > 1000000:
                raise Answer(400, {"message": {"note": ["is too long (maximum is 1000000 characters)"]}})
            note_id = record_comment("gitlab", name, number, self.r.url.path, self.body)
            raise Answer(201, {"id": note_id, "type": None, "body": text, "noteable_type": "MergeRequest",
                               "noteable_iid": number, "system": False, "author": {"username": "pando-bot"}})
        if (m := self.match("PUT", "projects/*/merge_requests/*/notes/*")) is not None:
            number = pull_request(m[1])
            comment = find_comment("gitlab", name, number, m[2]) if number is not None else None
            if comment is None:
                raise Answer(404, {"message": "404 Not found"})
            text = (self.body or {}).get("body")
            if not isinstance(text, str) or not text.strip():
                raise Answer(400, {"message": "400 Bad request - Note {:note=>[\"can't be blank\"]}"})
            edit_comment(comment, self.r.url.path, self.body)
            raise Answer(200, {"id": comment["id"], "body": text, "noteable_type": "MergeRequest",
                               "noteable_iid": number, "system": False, "author": {"username": "pando-bot"}})
        if rest == ["hooks"] and self.method == "GET":
            self.paged([{k: v for k, v in h.items() if k != "token"} for h in hooks_of("gitlab", name)])
        if rest == ["hooks"] and self.method == "POST":
            b = self.body or {}
            if not b.get("url"):
                raise Answer(400, {"error": "url is missing"})
            unknown = [k for k in b if k.endswith("_events") and k not in GITLAB_HOOK_FLAGS]
            if unknown:
                raise Answer(400, {"error": f"{unknown[0]} does not have a valid value"})
            hook = dict(b, id=next_id(), project_id=NAMES["gitlab"].index(name) + 1)
            hooks_of("gitlab", name).append(hook)  # GitLab takes a second hook for a URL it has
            raise Answer(201, {k: v for k, v in hook.items() if k != "token"})
        if len(rest) == 2 and rest[0] == "hooks" and self.method == "PUT":
            hook = next((h for h in hooks_of("gitlab", name) if str(h["id"]) == rest[1]), None)
            if not hook:
                raise Answer(404, {"message": "404 Not found"})
            hook.update(self.body or {})
            raise Answer(200, {k: v for k, v in hook.items() if k != "token"})


class BitbucketCloud(Forge):
    def authenticate(self):
        basic = "Basic " + base64.b64encode(f"{BB_USER}:{TOKEN}".encode()).decode()
        if self.header("Authorization") not in (basic, "Bearer " + TOKEN):
            raise Answer(401, {"type": "error", "error": {"message": "Unauthorized"}})

    def repo_key(self):
        return "/".join(self.s[1:3]) if self.s[:1] == ["repositories"] and len(self.s) >= 3 else None

    def error_body(self, status, message):
        return {"type": "error", "error": {"message": message}}

    def repo_json(self, name):
        private, default = repo_info("bitbucket", name)
        return {"type": "repository", "full_name": name, "is_private": private, "mainbranch": {"name": default},
                "links": {"html": {"href": "https://bitbucket.org/" + name},
                          "clone": [{"name": "https", "href": f"https://{BB_USER}@bitbucket.org/{name}.git"},
                                    {"name": "ssh", "href": f"git@bitbucket.org:{name}.git"}]}}

    def paged(self, items):
        page = int(self.q.get("page", "1"))
        total = len(items)
        items, more = self.page(items, page - 1)
        body = {"pagelen": PAGE, "size": total, "page": page, "values": items}
        if more:
            body["next"] = self.next_url(page=page + 1)
        raise Answer(200, body)

    def handle(self):
        if self.match("GET", "repositories") is not None:
            self.require(self.q.get("role") == "member", "this stand-in lists memberships only", 400)
            self.paged([self.repo_json(n) for n in NAMES["bitbucket"]])
        if (m := self.match("GET", "repositories/*")) is not None:
            names = [n for n in NAMES["bitbucket"] if n.split("/")[0] == m[0]]
            if not names:
                raise Answer(404, self.error_body(404, f"No workspace with identifier '{m[0]}'."))
            self.paged([self.repo_json(n) for n in names])
        if self.s[:1] != ["repositories"] or len(self.s) < 3:
            return
        name = "/".join(self.s[1:3])
        if not repo_info("bitbucket", name):
            raise Answer(404, self.error_body(404, f"Repository {name} not found"))
        rest = self.s[3:]
        if not rest and self.method == "GET":
            raise Answer(200, self.repo_json(name))
        if rest == ["refs", "branches"] and self.method == "GET":
            self.paged([{"type": "branch", "name": b, "target": {"type": "commit", "hash": c}} for b, c in BRANCHES])
        if len(rest) == 3 and rest[:2] == ["refs", "branches"] and self.method == "GET":
            found = dict(BRANCHES).get(rest[2])
            if not found:
                raise Answer(404, self.error_body(404, "Branch not found"))
            raise Answer(200, {"type": "branch", "name": rest[2], "target": {"type": "commit", "hash": found}})
        if len(rest) == 3 and rest[:2] == ["refs", "tags"] and self.method == "GET":
            tag = next((t for t in TAGS if t[0] == rest[2]), None)
            if not tag:
                raise Answer(404, self.error_body(404, "Tag not found"))
            raise Answer(200, {"type": "tag", "name": tag[0], "target": {"type": "commit", "hash": tag[1]}})
        if len(rest) == 2 and rest[0] == "commit" and self.method == "GET":
            full = next((c for c in COMMITS if c.startswith(rest[1])), None)
            if not full:
                raise Answer(404, self.error_body(404, f"Commit not found: {rest[1]}"))
            raise Answer(200, {"type": "commit", "hash": full})
        if len(rest) == 4 and rest[0] == "commit" and rest[2:] == ["statuses", "build"] and self.method == "POST":
            b = self.body or {}
            self.require(b.get("state") in ("INPROGRESS", "SUCCESSFUL", "FAILED", "STOPPED"),
                         "state: not a valid state", 400)
            self.require(b.get("key") and b.get("url"), "key and url are required", 400)
            record_status("bitbucket", name, rest[1], b)
            raise Answer(201, dict(b, type="build", uuid="{" + str(uuid.uuid4()) + "}"))
        if len(rest) == 3 and rest[0] == "pullrequests" and rest[2] == "comments" and self.method == "POST":
            number = pull_request(rest[1])
            if number is None:
                raise Answer(404, self.error_body(404, f"No pull request with id {rest[1]}"))
            content = (self.body or {}).get("content")
            raw = content.get("raw") if isinstance(content, dict) else None
            self.require(isinstance(raw, str) and raw.strip(), "content.raw: This field is required.", 400)
            comment_id = record_comment("bitbucket", name, number, self.r.url.path, self.body)
            raise Answer(201, {"type": "pullrequest_comment", "id": comment_id,
                               "content": {"type": "rendered", "raw": raw, "markup": "markdown", "html": ""},
                               "pullrequest": {"type": "pullrequest", "id": number}, "deleted": False})
        if len(rest) == 4 and rest[0] == "pullrequests" and rest[2] == "comments" and self.method == "PUT":
            number = pull_request(rest[1])
            comment = find_comment("bitbucket", name, number, rest[3]) if number is not None else None
            if comment is None:
                raise Answer(404, self.error_body(404, f"No comment with id {rest[3]}"))
            content = (self.body or {}).get("content")
            raw = content.get("raw") if isinstance(content, dict) else None
            self.require(isinstance(raw, str) and raw.strip(), "content.raw: This field is required.", 400)
            edit_comment(comment, self.r.url.path, self.body)
            raise Answer(200, {"type": "pullrequest_comment", "id": comment["id"],
                               "content": {"type": "rendered", "raw": raw, "markup": "markdown", "html": ""},
                               "pullrequest": {"type": "pullrequest", "id": number}, "deleted": False})
        if rest == ["hooks"] and self.method == "GET":
            self.paged([self.hook_json(h) for h in hooks_of("bitbucket", name)])
        if rest == ["hooks"] and self.method == "POST":
            b = self.body or {}
            self.require(b.get("url") and b.get("events"), "url and events are required", 400)
            self.require_events("bitbucket", b["events"])
            hook = dict(b, uuid="{" + str(uuid.uuid4()) + "}", subject_type="repository")
            hooks_of("bitbucket", name).append(hook)  # Bitbucket takes a second hook for a URL it has
            raise Answer(201, self.hook_json(hook))
        if len(rest) == 2 and rest[0] == "hooks" and self.method == "PUT":
            hook = next((h for h in hooks_of("bitbucket", name) if h["uuid"] == rest[1]), None)
            if not hook:
                raise Answer(404, self.error_body(404, "Webhook not found"))
            if "events" in (self.body or {}):
                self.require_events("bitbucket", self.body["events"])
            hook.update(self.body or {})
            raise Answer(200, self.hook_json(hook))

    @staticmethod
    def hook_json(hook):
        shown = {k: v for k, v in hook.items() if k != "secret"}
        shown["secret_set"] = bool(hook.get("secret"))
        return shown


class BitbucketDc(Forge):
    def authenticate(self):
        if self.header("Authorization") != "Bearer " + TOKEN:
            raise Answer(401, self.error_body(401, "Authentication failed. Please check your credentials and try "
                                                   "again."))

    def repo_key(self):
        s = self.s
        if s[:4] == ["rest", "api", "1.0", "projects"] and len(s) >= 7 and s[5] == "repos":
            # Project keys are read in any case (clone addresses write them in lower case).
            return (s[4] if s[4].startswith("~") else s[4].upper()) + "/" + s[6]
        return None

    def error_body(self, status, message):
        return {"errors": [{"context": None, "message": message, "exceptionName": None}]}

    def repo_json(self, name):
        private, _ = repo_info("bbdc", name)
        key, slug = name.split("/")
        return {"slug": slug, "name": slug, "project": {"key": key}, "public": not private,
                "links": {"clone": [{"href": f"https://bitbucket.example/scm/{key.lower()}/{slug}.git",
                                     "name": "http"},
                                    {"href": f"ssh://git@bitbucket.example:7999/{key.lower()}/{slug}.git",
                                     "name": "ssh"}],
                          "self": [{"href": f"https://bitbucket.example/projects/{key}/repos/{slug}/browse"}]}}

    def paged(self, items):
        start = int(self.q.get("start", "0"))
        shown = items[start:start + PAGE]
        last = start + PAGE >= len(items)
        body = {"size": len(shown), "limit": PAGE, "start": start, "isLastPage": last, "values": shown}
        if not last:
            body["nextPageStart"] = start + PAGE
        raise Answer(200, body)

    def handle(self):
        s = self.s
        if (m := self.match("POST", "rest/build-status/1.0/commits/*")) is not None:
            b = self.body or {}
            self.require(b.get("state") in ("SUCCESSFUL", "FAILED", "INPROGRESS"), "state is not valid", 400)
            self.require(b.get("key") and b.get("url"), "key and url are mandatory", 400)
            self.require(all(len(str(b.get(k, ""))) <= 255 for k in ("key", "name", "description")) and
                         len(b["url"]) <= 450, "a field is too long", 400)
            record_status("bbdc", "", m[0], b)
            raise Answer(204)
        if self.match("GET", "rest/api/1.0/repos") is not None:
            self.paged([self.repo_json(n) for n in NAMES["bbdc"]])
        if (m := self.match("GET", "rest/api/1.0/projects/*/repos")) is not None:
            names = [n for n in NAMES["bbdc"] if n.split("/")[0] == m[0]]
            if not names:
                raise Answer(404, self.error_body(404, f"Project {m[0]} does not exist."))
            self.paged([self.repo_json(n) for n in names])
        name = self.repo_key()
        if not name:
            return
        if not repo_info("bbdc", name):
            raise Answer(404, self.error_body(404, f"Repository {name} does not exist."))
        rest = s[7:]
        if not rest and self.method == "GET":
            raise Answer(200, self.repo_json(name))
        if rest == ["branches"] and self.method == "GET":
            text = self.q.get("filterText", "")
            self.paged([{"id": "refs/heads/" + b, "displayId": b, "type": "BRANCH", "latestCommit": c,
                         "isDefault": b == "main"} for b, c in BRANCHES if text in b])
        if rest == ["tags"] and self.method == "GET":
            text = self.q.get("filterText", "")
            self.paged([{"id": "refs/tags/" + t[0], "displayId": t[0], "type": "TAG", "latestCommit": t[1],
                         "hash": t[2]} for t in TAGS if text in t[0]])
        if len(rest) == 2 and rest[0] == "commits" and self.method == "GET":
            full = next((c for c in COMMITS if c.startswith(rest[1])), None)
            if not full:
                raise Answer(404, self.error_body(404, f"Commit '{rest[1]}' does not exist in repository."))
            raise Answer(200, {"id": full, "displayId": full[:11]})
        if len(rest) == 3 and rest[0] == "pull-requests" and rest[2] == "comments" and self.method == "POST":
            number = pull_request(rest[1])
            if number is None:
                raise Answer(404, self.error_body(404, f"Pull request {rest[1]} does not exist in {name}."))
            text = (self.body or {}).get("text")
            self.require(isinstance(text, str) and text.strip() and len(text) < 32768,
                         "Please enter a non-empty value less than 32768 characters", 400)
            comment_id = record_comment("bbdc", name, number, self.r.url.path, self.body)
            raise Answer(201, {"id": comment_id, "version": 0, "text": text, "author": {"name": "pando-bot"},
                               "comments": [], "tasks": []})
        if len(rest) == 4 and rest[0] == "pull-requests" and rest[2] == "comments" and self.method in ("GET", "PUT"):
            # A comment carries a version each edit raises; an edit must name the current one.
            number = pull_request(rest[1])
            comment = find_comment("bbdc", name, number, rest[3]) if number is not None else None
            if comment is None:
                raise Answer(404, self.error_body(404, f"Comment {rest[3]} does not exist."))
            if self.method == "PUT":
                b = self.body or {}
                text = b.get("text")
                self.require(isinstance(text, str) and text.strip() and len(text) < 32768,
                             "Please enter a non-empty value less than 32768 characters", 400)
                self.require(isinstance(b.get("version"), int), "version is required", 400)
                if b["version"] != comment.get("edits", 0):
                    raise Answer(409, self.error_body(409, "You are attempting to modify a comment based on "
                                                           "out-of-date information."))
                edit_comment(comment, self.r.url.path, b)
            raise Answer(200, {"id": comment["id"], "version": comment.get("edits", 0),
                               "text": comment["body"]["text"], "author": {"name": "pando-bot"}})
        if rest == ["webhooks"] and self.method == "GET":
            self.paged([self.hook_json(h) for h in hooks_of("bbdc", name)])
        if rest == ["webhooks"] and self.method == "POST":
            b = self.body or {}
            self.require(b.get("name") and b.get("url") and b.get("events"), "name, url and events are required",
                         400)
            self.require_events("bbdc", b["events"])
            hook = dict(b, id=next_id())
            hooks_of("bbdc", name).append(hook)
            raise Answer(201, self.hook_json(hook))
        if len(rest) == 2 and rest[0] == "webhooks" and self.method == "PUT":
            hook = next((h for h in hooks_of("bbdc", name) if str(h["id"]) == rest[1]), None)
            if not hook:
                raise Answer(404, self.error_body(404, "No webhook with that id"))
            if "events" in (self.body or {}):
                self.require_events("bbdc", self.body["events"])
            hook.update(self.body or {})
            raise Answer(200, self.hook_json(hook))

    @staticmethod
    def hook_json(hook):
        configuration = {k: v for k, v in (hook.get("configuration") or {}).items() if k != "secret"}
        return dict(hook, configuration=configuration)


class Azure(Forge):
    prefix = 2  # /azure/ORG

    def authenticate(self):
        auth = self.header("Authorization")
        ok = False
        if auth.startswith("Basic "):
            try:
                ok = base64.b64decode(auth[6:]).decode().split(":", 1)[1] == TOKEN
            except (ValueError, IndexError):
                ok = False
        if not ok:
            raise Answer(401, raw=b"", headers={"WWW-Authenticate": "Basic realm=\"https://dev.azure.com/\""})
        if self.q.get("api-version") != "7.1":
            raise Answer(400, self.error_body(400, "VS800075: The project name or api-version is missing"))

    def repo_key(self):
        s = self.s
        if len(s) >= 5 and s[1:4] == ["_apis", "git", "repositories"]:
            return s[0] + "/" + s[4]
        return None

    def fail(self, status):
        if status == 203:
            raise Answer(203, raw=b"<html><head><title>Azure DevOps Services | Sign In</title></head></html>",
                         headers={"Content-Type": "text/html"})
        if status == 401:
            raise Answer(401, raw=b"")
        super().fail(status)

    def error_body(self, status, message):
        return {"$id": "1", "innerException": None, "message": message, "typeName": "", "typeKey": "",
                "errorCode": 0, "eventId": 3000}

    def repo_json(self, name):
        private, default = repo_info("azure", name)
        project, repo = name.split("/")
        org = self.r.segments[1]
        return {"id": repo_guid(name), "name": repo,
                "project": {"id": AZURE_PROJECT_ID, "name": project, "visibility": "private" if private else "public"},
                "defaultBranch": "refs/heads/" + default,
                "remoteUrl": f"https://{org}@dev.azure.com/{org}/{project}/_git/{repo}",
                "sshUrl": f"git@ssh.dev.azure.com:v3/{org}/{project}/{repo}",
                "webUrl": f"https://dev.azure.com/{org}/{project}/_git/{repo}"}

    def paged(self, items):
        index = int(self.q.get("continuationToken", "0"))
        shown, more = self.page(items, index)
        headers = {"x-ms-continuationtoken": str(index + 1)} if more else {}
        raise Answer(200, {"count": len(shown), "value": shown}, headers)

    def find_repo(self, project, repo):
        name = f"{project}/{repo}"
        if repo_info("azure", name):
            return name
        by_id = [n for n in NAMES["azure"] if repo_guid(n) == repo and n.startswith(project + "/")]
        return by_id[0] if by_id else None

    def handle(self):
        s = self.s
        if self.match("GET", "_apis/git/repositories") is not None:
            self.paged([self.repo_json(n) for n in NAMES["azure"]])
        if (m := self.match("GET", "*/_apis/git/repositories")) is not None:
            names = [n for n in NAMES["azure"] if n.split("/")[0] == m[0]]
            if not names:
                raise Answer(404, self.error_body(404, f"TF200016: The following project does not exist: {m[0]}."))
            self.paged([self.repo_json(n) for n in names])
        if s[:3] == ["_apis", "hooks", "subscriptions"]:
            return self.subscriptions()
        if len(s) < 5 or s[1:4] != ["_apis", "git", "repositories"]:
            return
        name = self.find_repo(s[0], s[4])
        if not name:
            raise Answer(404, self.error_body(404, f"TF401019: The Git repository with name or identifier {s[4]} "
                                                   "does not exist or you do not have permissions for the operation "
                                                   "you are attempting."))
        rest = s[5:]
        if not rest and self.method == "GET":
            raise Answer(200, self.repo_json(name))
        if rest == ["refs"] and self.method == "GET":
            refs = [{"name": "refs/heads/" + b, "objectId": c} for b, c in BRANCHES]
            for t in TAGS:
                ref = {"name": "refs/tags/" + t[0], "objectId": t[2]}
                if self.q.get("peelTags") == "true":
                    ref["peeledObjectId"] = t[1]
                refs.append(ref)
            prefix = "refs/" + self.q.get("filter", "")
            self.paged([r for r in refs if r["name"].startswith(prefix)])
        if len(rest) == 2 and rest[0] == "commits" and self.method == "GET":
            if rest[1] not in COMMITS:
                raise Answer(404, self.error_body(404, f"TF401175:The Git commit with id {rest[1]} does not exist."))
            raise Answer(200, {"commitId": rest[1]})
        if len(rest) == 3 and rest[0] == "commits" and rest[2] == "statuses" and self.method == "POST":
            b = self.body or {}
            self.require(b.get("state") in ("notSet", "pending", "succeeded", "failed", "error", "notApplicable"),
                         "Invalid state", 400)
            self.require(isinstance(b.get("context"), dict) and b["context"].get("name"),
                         "The status context name is required", 400)
            record_status("azure", name, rest[1], b)
            raise Answer(201, dict(b, id=next_id()))
        if (len(rest) == 6 and rest[0] == "pullRequests" and rest[2] == "threads" and rest[4] == "comments"
                and self.method == "PATCH"):
            self.edit_thread_comment(name, rest)
        if len(rest) == 3 and rest[0] == "pullRequests" and rest[2] == "threads" and self.method == "POST":
            number = pull_request(rest[1])
            if number is None:
                raise Answer(404, self.error_body(404, "TF401180: The requested pull request was not found."))
            b = self.body or {}
            comments = b.get("comments")
            self.require(isinstance(comments, list) and len(comments) == 1 and isinstance(comments[0], dict),
                         "This stand-in takes threads of one comment", 400)
            comment = comments[0]
            content = comment.get("content")
            self.require(isinstance(content, str) and content.strip(),
                         "Value cannot be null.\r\nParameter name: comment.Content", 400)
            self.require(len(content) <= 150000, "A discussion comment cannot be longer than 150000 characters."
                                                 "\r\nParameter name: comment.Content", 400)
            # Enums are taken as their numbers or their names, as Azure's serializer does.
            self.require(comment.get("commentType", 1) in (1, "text") and comment.get("parentCommentId", 0) == 0,
                         "This stand-in takes a text comment that starts its thread", 400)
            self.require(b.get("status", 1) in (1, "active"), "This stand-in takes active threads", 400)
            thread_id = record_comment("azure", name, number, self.r.url.path, b)
            raise Answer(200, {"id": thread_id, "status": "active", "isDeleted": False,
                               "comments": [{"id": 1, "parentCommentId": 0, "content": content,
                                             "commentType": "text", "author": {"displayName": "pando-bot"}}],
                               "pullRequestThreadContext": None, "threadContext": None})

    def edit_thread_comment(self, name, rest):
        """PATCH pullRequests/N/threads/T/comments/C: the content of a thread's comment replaced."""
        number = pull_request(rest[1])
        thread = find_comment("azure", name, number, rest[3]) if number is not None else None
        if thread is None or rest[5] != "1":
            raise Answer(404, self.error_body(404, "TF401181: The pull request comment could not be found."))
        content = (self.body or {}).get("content")
        self.require(isinstance(content, str) and content.strip(),
                     "Value cannot be null.\r\nParameter name: comment.Content", 400)
        self.require(len(content) <= 150000, "A discussion comment cannot be longer than 150000 characters.", 400)
        edit_comment(thread, self.r.url.path, self.body)
        raise Answer(200, {"id": 1, "parentCommentId": 0, "content": content, "commentType": "text",
                           "author": {"displayName": "pando-bot"}})

    def subscriptions(self):
        s, b = self.s, self.body or {}
        hooks = hooks_of("azure", "*")
        if len(s) == 3 and self.method == "GET":
            wanted = {k: self.q[k] for k in ("publisherId", "eventType", "consumerId", "consumerActionId")
                      if k in self.q}
            self.paged([self.subscription_json(h) for h in hooks if all(h.get(k) == v for k, v in wanted.items())])
        if len(s) in (3, 4) and self.method in ("POST", "PUT"):
            self.require(b.get("publisherId") == "tfs" and b.get("eventType") in HOOK_EVENTS["azure"] and
                         b.get("consumerId") == "webHooks" and b.get("consumerActionId") == "httpRequest",
                         "This stand-in takes git push and pull request subscriptions of the webHooks consumer only",
                         400)
            inputs = b.get("publisherInputs") or {}
            self.require(inputs.get("projectId") == AZURE_PROJECT_ID, "publisherInputs.projectId is not a project",
                         400)
            self.require(any(repo_guid(n) == inputs.get("repository") for n in NAMES["azure"]),
                         "publisherInputs.repository is not a repository", 400)
            self.require((b.get("consumerInputs") or {}).get("url"), "consumerInputs.url is required", 400)
            if self.method == "POST":
                hook = dict(b, id=str(uuid.uuid4()), status="enabled")
                hooks.append(hook)
                # Kept by repository too, for the test to read.
                name = next(n for n in NAMES["azure"] if repo_guid(n) == inputs["repository"])
                STATE["hooks"]["azure"].setdefault(name, []).append(hook)
                raise Answer(200, self.subscription_json(hook))
            hook = next((h for h in hooks if h["id"] == s[3]), None)
            if not hook:
                raise Answer(404, self.error_body(404, f"Subscription {s[3]} does not exist."))
            hook.update(b)
            raise Answer(200, self.subscription_json(hook))

    @staticmethod
    def subscription_json(hook):
        inputs = dict(hook.get("consumerInputs") or {})
        if "basicAuthPassword" in inputs:
            inputs["basicAuthPassword"] = "********"
        return dict(hook, consumerInputs=inputs)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
