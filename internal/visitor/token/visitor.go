package token

import (
	"crypto/sha256"
	"encoding/hex"
)

// VisitorSubject is the entry token's sub for the visitor whose cookie holds
// id: a hash, not the cookie, because tokens travel in URLs, logs and to
// checkout, and the cookie must not be readable from one. A gate that sees
// the visitor's cookie binds a token to its visitor by comparing the two.
func VisitorSubject(cookie string) string {
	sum := sha256.Sum256([]byte("waitroom-visitor\x00" + cookie))
	return hex.EncodeToString(sum[:16])
}
