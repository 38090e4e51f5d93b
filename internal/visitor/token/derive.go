package token

import (
	"crypto/hkdf"
	"crypto/sha256"
)

// Derive returns a 32-byte secret for label, derived (HKDF-SHA256) from the
// signing key's seed: every server sharing the key file derives the same
// secret, and the signing key itself is never used for anything else.
func (ks *Keyset) Derive(label string) []byte { return ks.deriveAt(0, label) }

// deriveAt is Derive from the keyset's i-th key, for secrets that must still
// be recognised under a key that is being rotated out.
func (ks *Keyset) deriveAt(i int, label string) []byte {
	k, err := hkdf.Key(sha256.New, ks.keys[i].priv.Seed(), nil, "waitroom/"+label, 32)
	if err != nil { // only for lengths HKDF cannot give; 32 is always fine
		panic("token: derive: " + err.Error())
	}
	return k
}
