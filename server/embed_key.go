package server

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
	"github.com/waitroom/waitroom/queue"
)

// An embed key is how a visitor inside a shop's iframe is known when the
// browser may refuse the iframe's cookies. The server hands it out on every
// embed enter; the iframe keeps it in memory and sends it back in a header
// (and, only when its cookies do not stick, in the push URLs, which cannot
// carry headers). Two kinds:
//
//   - "a.<32 hex>": an anonymous visitor. Random, unguessable, and issued for
//     one room: the SDK stores it per room in the embedder's localStorage and
//     the partitioned cookie is scoped to that room's embed API, so the key of
//     one room never reaches another. The line knows the visitor as
//     "e:" + a hash of room and key, so the entry token's sub (which travels
//     in URLs) never carries the key itself.
//   - "u.<sub>.<exp>.<mac>": a visitor who came with a user token, HMAC-signed
//     with the room's user_secret, bound to the room and expiring. It lets the
//     push channels find "u:<sub>" without the user token itself ever going
//     into a URL or a cookie. It is never stored: after a reload the shop
//     passes its user token again.
const (
	embedKeyHeader = "X-Waitroom-Key"
	embedKeyQuery  = "key"
	embedKeyCookie = "wr_ekey"
	// embedKeyTTL bounds a user key and the cookie, like the visitor cookie's day.
	embedKeyTTL   = 24 * time.Hour
	embedKeyLimit = 1024 // longer than any key we issue: refused unread
)

var b64 = base64.RawURLEncoding

// newAnonymousKey draws a new anonymous visitor's key.
func newAnonymousKey() string { return "a." + queue.RandomID() }

func anonymousKey(key string) bool { return strings.HasPrefix(key, "a.") }

// newUserKey signs sub into a key for room that expires after embedKeyTTL.
func newUserKey(room, sub, secret string, now time.Time) string {
	exp := strconv.FormatInt(now.Add(embedKeyTTL).Unix(), 10)
	s := b64.EncodeToString([]byte(sub))
	return "u." + s + "." + exp + "." + b64.EncodeToString(userKeyMAC(secret, room, s, exp))
}

func userKeyMAC(secret, room, sub, exp string) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("waitroom-embed-key\x00" + room + "\x00" + sub + "\x00" + exp))
	return m.Sum(nil)
}

// keyIdentity returns the line identity key stands for in room, or "" when
// the key is malformed, forged, expired or not for this room.
func keyIdentity(key, room string, s queue.Settings, now time.Time) string {
	if len(key) > embedKeyLimit {
		return ""
	}
	if secret, ok := strings.CutPrefix(key, "a."); ok {
		if !hexid.Valid(secret) { // the same 32 lowercase hex
			return ""
		}
		sum := sha256.Sum256([]byte("waitroom-embed\x00" + room + "\x00" + secret))
		return "e:" + hex.EncodeToString(sum[:16])
	}
	rest, ok := strings.CutPrefix(key, "u.")
	if !ok || s.UserSecret == "" {
		return ""
	}
	parts := strings.Split(rest, ".")
	if len(parts) != 3 {
		return ""
	}
	sub, err := b64.DecodeString(parts[0])
	if err != nil || len(sub) == 0 {
		return ""
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || !now.Before(time.Unix(exp, 0)) {
		return ""
	}
	mac, err := b64.DecodeString(parts[2])
	if err != nil || !hmac.Equal(mac, userKeyMAC(s.UserSecret, room, parts[0], parts[1])) {
		return ""
	}
	return "u:" + string(sub)
}
