#!/usr/bin/python3
"""Verifies a Pando identity assertion the way an app would, with PyJWT (Debian's python3-jwt
and python3-cryptography), to show that any JWT library can: the keys come from the JWKS URL,
the algorithm is pinned to ES256, the audience is the app.

usage: verify_assertion.py JWKS_URL APP  (the assertion on standard input)
Prints the claims as JSON and exits 0, or prints why it was refused and exits 1.
"""
import json
import sys

import jwt


def main():
    jwks_url, app = sys.argv[1], sys.argv[2]
    token = sys.stdin.read().strip()
    try:
        key = jwt.PyJWKClient(jwks_url).get_signing_key_from_jwt(token)
        claims = jwt.decode(token, key.key, algorithms=["ES256"], audience=app,
                            options={"require": ["exp", "iat", "nbf", "sub", "aud", "jti"]})
    except jwt.PyJWTError as error:
        print("refused: %s: %s" % (type(error).__name__, error))
        return 1
    print(json.dumps(claims, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
