#!/usr/bin/env python3
"""Checks a dynamic configuration file Pando wrote for Traefik v3's file provider.

Usage: check_traefik_config.py SCHEMA DYNAMIC.yml [ENTRYPOINTS.yml] [--entry-point NAME ...]

- the file is YAML that parses, and valid against SCHEMA (traefik-v3-dynamic.schema.json);
- every router's rule is in Traefik v3's rule syntax (one argument per Host, Path, PathPrefix, ...,
  no v2 matchers such as HostHeader or Headers, no v2 {name:regexp} placeholders), and the regular
  expressions in it and in redirectRegex middlewares compile;
- every router names services and middlewares the file defines (or Traefik's @internal ones) and
  entry points the static configuration has (ENTRYPOINTS.yml's and the --entry-point names).

Prints one line per problem and exits 1 when there is any; exits 0 silently otherwise.
"""

import re
import sys

import jsonschema
import yaml

# Traefik v3's matchers and how many arguments each takes.
MATCHERS = {
    "Host": 1, "HostRegexp": 1, "Path": 1, "PathPrefix": 1, "PathRegexp": 1, "Method": 1,
    "ClientIP": 1, "Header": 2, "HeaderRegexp": 2, "Query": 2, "QueryRegexp": 2,
}
REGEXP_ARG = {"HostRegexp": 0, "PathRegexp": 0, "HeaderRegexp": 1, "QueryRegexp": 1}
V2_ONLY = {"HostHeader", "Headers", "HeadersRegexp", "HostSNI", "HostSNIRegexp", "ALPN"}

TOKEN = re.compile(r"\s*(?:(?P<op>&&|\|\||!|\(|\)|,)|(?P<name>[A-Za-z]+)|(?P<str>`[^`]*`|\"(?:[^\"\\]|\\.)*\"))")


def tokenize(rule):
    tokens, pos = [], 0
    rule = rule.rstrip()
    while pos < len(rule):
        m = TOKEN.match(rule, pos)
        if not m or m.end() == pos:
            raise ValueError(f"unexpected text at {pos}: {rule[pos:pos + 12]!r}")
        kind = m.lastgroup
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    return tokens


class RuleParser:
    """expr := term ('||' term)* ; term := unary ('&&' unary)* ; unary := '!' unary | '(' expr ')' | matcher"""

    def __init__(self, rule):
        self.tokens = tokenize(rule)
        self.at = 0

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else (None, None)

    def take(self, kind=None, value=None):
        tok = self.peek()
        if tok[0] is None or (kind and tok[0] != kind) or (value and tok[1] != value):
            raise ValueError(f"expected {value or kind}, found {tok[1]!r}")
        self.at += 1
        return tok

    def parse(self):
        self.expr()
        if self.at != len(self.tokens):
            raise ValueError(f"unexpected {self.peek()[1]!r} after a whole rule")

    def expr(self):
        self.term()
        while self.peek() == ("op", "||"):
            self.take()
            self.term()

    def term(self):
        self.unary()
        while self.peek() == ("op", "&&"):
            self.take()
            self.unary()

    def unary(self):
        tok = self.peek()
        if tok == ("op", "!"):
            self.take()
            self.unary()
        elif tok == ("op", "("):
            self.take()
            self.expr()
            self.take("op", ")")
        else:
            self.matcher()

    def matcher(self):
        _, name = self.take("name")
        if name in V2_ONLY:
            raise ValueError(f"{name} is not a Traefik v3 HTTP matcher")
        if name not in MATCHERS:
            raise ValueError(f"unknown matcher {name}")
        self.take("op", "(")
        args = [self.take("str")[1][1:-1]]
        while self.peek() == ("op", ","):
            self.take()
            args.append(self.take("str")[1][1:-1])
        self.take("op", ")")
        if len(args) != MATCHERS[name]:
            raise ValueError(f"{name} takes {MATCHERS[name]} argument(s) in v3, got {len(args)}")
        if name in ("Path", "PathPrefix") and not args[0].startswith("/"):
            raise ValueError(f"{name}(`{args[0]}`) does not start with /")
        if name == "Host" and (not args[0] or re.search(r"[\s{}*]", args[0])):
            raise ValueError(f"Host(`{args[0]}`) is not one host name")
        if name in REGEXP_ARG:
            pattern = args[REGEXP_ARG[name]]
            if re.search(r"\{[A-Za-z_]+:", pattern):
                raise ValueError(f"{name} uses v2's {{name:regexp}} placeholders: {pattern}")
            re.compile(pattern)


def check(schema_path, dynamic_path, entry_points_path, extra_entry_points):
    problems = []
    with open(schema_path, encoding="utf-8") as f:
        import json
        schema = json.load(f)
    with open(dynamic_path, encoding="utf-8") as f:
        config = yaml.safe_load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for error in sorted(validator.iter_errors(config), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        problems.append(f"schema: {where}: {error.message}")

    entry_points = set(extra_entry_points)
    if entry_points_path:
        with open(entry_points_path, encoding="utf-8") as f:
            static = yaml.safe_load(f) or {}
        for name, ep in (static.get("entryPoints") or {}).items():
            if set(ep) != {"address"} or not re.fullmatch(r"127\.0\.0\.1:[0-9]{1,5}", str(ep["address"])):
                problems.append(f"entrypoints: {name}: {ep!r} is not {{address: 127.0.0.1:PORT}}")
            entry_points.add(name)

    http = (config or {}).get("http") or {}
    services = set((http.get("services") or {}).keys())
    middlewares = http.get("middlewares") or {}
    for name, router in (http.get("routers") or {}).items():
        if not isinstance(router, dict):
            continue
        try:
            RuleParser(str(router.get("rule", ""))).parse()
        except (ValueError, re.error) as e:
            problems.append(f"rule: routers/{name}: {router.get('rule')!r}: {e}")
        service = router.get("service", "")
        if not (service in services or str(service).endswith("@internal")):
            problems.append(f"reference: routers/{name}: service {service!r} is not defined")
        for mw in router.get("middlewares") or []:
            if mw not in middlewares:
                problems.append(f"reference: routers/{name}: middleware {mw!r} is not defined")
        for ep in router.get("entryPoints") or []:
            if ep not in entry_points:
                problems.append(f"reference: routers/{name}: entry point {ep!r} is in no static configuration")
    for name, mw in middlewares.items():
        regex = ((mw or {}).get("redirectRegex") or {}).get("regex")
        if regex is not None:
            try:
                re.compile(regex)
            except re.error as e:
                problems.append(f"regex: middlewares/{name}: {regex!r}: {e}")
    return problems


def main(argv):
    args, extra, i = [], [], 1
    while i < len(argv):
        if argv[i] == "--entry-point":
            extra.append(argv[i + 1])
            i += 2
        else:
            args.append(argv[i])
            i += 1
    if len(args) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    problems = check(args[0], args[1], args[2] if len(args) == 3 else None, extra)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
