#!/usr/bin/env python3
"""A Python checkout's side of waitroom: verify an entry token offline
through the JWKS, check it was issued to this visitor, then hand the slot
back.

    python3 verify.py <waitroom URL> <room> <token> <wr_vid cookie> [--complete]

Prints {"valid": true, "ticket", "sub"} or {"valid": false, "reason"}; with
--complete, also the answer of POST /api/rooms/{room}/complete. Exit 0 when
valid (and completed), 1 when refused, 2 on a usage or network error.

Binding: an anonymous visitor's token has sub = the first 16 bytes, in hex,
of SHA-256("waitroom-visitor\\0" + its wr_vid cookie). A checkout on the
waiting room's site sees that cookie, so a token copied to another visitor
(another cookie) is refused here as "copied". For logged-in users (user
tokens), sub is the user's id: compare it with the session's user instead.

Needs PyJWT with cryptography (Debian: python3-jwt python3-cryptography).
"""
import hashlib
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

import jwt


def visitor_subject(cookie):
    return hashlib.sha256(b"waitroom-visitor\0" + cookie.encode()).digest()[:16].hex()


def verify(base, room, token, visitor):
    jwks = jwt.PyJWKClient(urllib.parse.urljoin(base, "/.well-known/jwks.json"))
    try:
        key = jwks.get_signing_key_from_jwt(token).key
        claims = jwt.decode(token, key, algorithms=["EdDSA"], audience=room, issuer=base,
                            options={"require": ["exp", "nbf", "sub", "jti", "aud", "iss"]})
    except jwt.ExpiredSignatureError:
        return {"valid": False, "reason": "expired"}
    except jwt.ImmatureSignatureError:
        return {"valid": False, "reason": "not_yet_valid"}
    except jwt.InvalidAudienceError:
        return {"valid": False, "reason": "wrong_room"}
    except jwt.InvalidIssuerError:
        return {"valid": False, "reason": "wrong_issuer"}
    except (jwt.InvalidSignatureError, jwt.PyJWKClientError):
        return {"valid": False, "reason": "forged"}  # bad signature, or a key the JWKS does not have
    except jwt.InvalidTokenError:
        return {"valid": False, "reason": "malformed"}
    if claims["sub"] != visitor_subject(visitor):
        return {"valid": False, "reason": "copied"}
    return {"valid": True, "ticket": claims["jti"], "sub": claims["sub"]}


def complete(base, room, token):
    url = urllib.parse.urljoin(base, "/api/rooms/%s/complete" % urllib.parse.quote(room, safe=""))
    req = urllib.request.Request(url, data=json.dumps({"token": token}).encode(),
                                 headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as res:
            return {"status": res.status, "body": json.load(res)}
    except urllib.error.HTTPError as e:
        return {"status": e.code, "body": json.load(e)}


def main(argv):
    args = [a for a in argv[1:] if a != "--complete"]
    if len(args) != 4:
        print(__doc__.strip().splitlines()[4].strip(), file=sys.stderr)
        return 2
    base, room, token, visitor = args
    out = verify(base, room, token, visitor)
    if out["valid"] and "--complete" in argv:
        out["complete"] = complete(base, room, token)
    print(json.dumps(out))
    return 0 if out["valid"] and out.get("complete", {"status": 200})["status"] == 200 else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (OSError, urllib.error.URLError) as e:
        print(e, file=sys.stderr)
        sys.exit(2)
