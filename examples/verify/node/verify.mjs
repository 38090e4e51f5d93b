// A Node checkout's side of waitroom: verify an entry token offline through
// the JWKS, check it was issued to this visitor, then hand the slot back.
//
//   node verify.mjs <waitroom URL> <room> <token> <wr_vid cookie> [--complete]
//
// Prints {"valid": true, "ticket", "sub"} or {"valid": false, "reason"}; with
// --complete, also the answer of POST /api/rooms/{room}/complete. Exit 0 when
// valid (and completed), 1 when refused, 2 on a usage or network error.
//
// Binding: an anonymous visitor's token has sub = the first 16 bytes, in hex,
// of SHA-256("waitroom-visitor\0" + its wr_vid cookie). A checkout on the
// waiting room's site sees that cookie, so a token copied to another visitor
// (another cookie) is refused here as "copied". For logged-in users (user
// tokens), sub is the user's id: compare it with the session's user instead.
import { createHash } from "node:crypto";
import { createRemoteJWKSet, jwtVerify, errors } from "jose";

const [base, room, token, visitor] = process.argv.slice(2);
const complete = process.argv.includes("--complete");
if (!base || !room || !token || visitor === undefined) {
  console.error("usage: node verify.mjs <waitroom URL> <room> <token> <wr_vid cookie> [--complete]");
  process.exit(2);
}

function visitorSubject(cookie) {
  return createHash("sha256").update("waitroom-visitor\0" + cookie).digest().subarray(0, 16).toString("hex");
}

function reasonOf(err) {
  if (err instanceof errors.JWTExpired) return "expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "aud") return "wrong_room";
    if (err.claim === "nbf") return "not_yet_valid";
    if (err.claim === "iss") return "wrong_issuer";
    return "invalid_claims";
  }
  if (err instanceof errors.JWSSignatureVerificationFailed || err instanceof errors.JWKSNoMatchingKey) return "forged";
  if (err instanceof errors.JWSInvalid || err instanceof errors.JWTInvalid) return "malformed";
  throw err;
}

let out;
try {
  const jwks = createRemoteJWKSet(new URL("/.well-known/jwks.json", base));
  // jose compares nbf with the current whole second (rounded down), and
  // waitroom's nbf is precise to the millisecond: without a second of
  // tolerance a token is refused as not yet valid in the second it opens.
  const { payload } = await jwtVerify(token, jwks, {
    issuer: base, audience: room, algorithms: ["EdDSA"], clockTolerance: 1,
  });
  out = payload.sub === visitorSubject(visitor)
    ? { valid: true, ticket: payload.jti, sub: payload.sub }
    : { valid: false, reason: "copied" };
} catch (err) {
  try {
    out = { valid: false, reason: reasonOf(err) };
  } catch (e) {
    console.error(String(e));
    process.exit(2);
  }
}
if (out.valid && complete) {
  const res = await fetch(new URL(`/api/rooms/${encodeURIComponent(room)}/complete`, base), {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }),
  });
  out.complete = { status: res.status, body: await res.json() };
}
console.log(JSON.stringify(out));
process.exit(out.valid && (!complete || out.complete.status === 200) ? 0 : 1);
