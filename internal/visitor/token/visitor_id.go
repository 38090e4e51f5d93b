package token

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
)

// A visitor id (the wr_vid cookie) is 32 hex characters: 8 random bytes and
// 8 bytes of a MAC under a secret derived from the signing keys, which every
// server of a deployment shares. Any 32-hex id is still accepted as a
// visitor while the line runs (a shop's middleware enters the line under ids
// of its own); the MAC tells, while Redis is down and nothing else can, that
// waitroom itself handed the id out, so random cookies are not visitors.

// NewVisitorID draws a visitor id that Issued recognises.
func (ks *Keyset) NewVisitorID() string {
	var b [16]byte
	_, _ = rand.Read(b[:8])
	copy(b[8:], ks.visitorMAC(0, b[:8]))
	return hex.EncodeToString(b[:])
}

// IssuedVisitorID reports whether id was drawn by NewVisitorID under any
// key of the keyset (a rotated-out signing key still counts while listed).
func (ks *Keyset) IssuedVisitorID(id string) bool {
	if !hexid.Valid(id) {
		return false // one spelling: lower-case hex, as issued
	}
	b, _ := hex.DecodeString(id)
	for i := range ks.keys {
		if hmac.Equal(b[8:], ks.visitorMAC(i, b[:8])) {
			return true
		}
	}
	return false
}

func (ks *Keyset) visitorMAC(i int, random []byte) []byte {
	if i >= len(ks.keys) {
		return nil
	}
	m := hmac.New(sha256.New, ks.deriveAt(i, "visitor-id"))
	m.Write(random)
	return m.Sum(nil)[:8]
}
