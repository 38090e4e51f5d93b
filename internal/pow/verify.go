package pow

import (
	"bytes"
	"crypto/hmac"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"
)

// MaxPayload bounds what Parse reads: a real payload is under 1 KiB.
const MaxPayload = 4096

// Reasons a payload is refused; each is its own error so callers can say which.
var (
	ErrMalformed     = errors.New("pow: malformed payload")
	ErrForged        = errors.New("pow: challenge signature does not match")
	ErrExpired       = errors.New("pow: challenge expired")
	ErrWrongRoom     = errors.New("pow: challenge is for another room")
	ErrWrongVisitor  = errors.New("pow: challenge is for another visitor")
	ErrWrongSolution = errors.New("pow: solution does not solve the challenge")
)

// Parse decodes a payload (base64 of its JSON, standard or URL alphabet,
// padded or not) strictly: unknown fields and trailing data are refused.
func Parse(s string) (Payload, error) {
	var p Payload
	if len(s) == 0 || len(s) > MaxPayload {
		return p, ErrMalformed
	}
	s = strings.TrimRight(s, "=")
	raw, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		if raw, err = base64.RawURLEncoding.DecodeString(s); err != nil {
			return p, ErrMalformed
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil || dec.More() {
		return Payload{}, ErrMalformed
	}
	c := p.Challenge.Parameters
	if c.Algorithm != Algorithm || c.Cost != ScryptN || c.MemoryCost != ScryptR || c.Parallelism != ScryptP ||
		c.KeyLength != KeyLength || !isHex(c.Nonce, 16) || !isHex(c.Salt, 16) || !isHex(c.KeyPrefix, prefixBytes) ||
		!isHex(c.KeySignature, 32) || !isHex(p.Challenge.Signature, 32) || !isHex(p.Solution.DerivedKey, KeyLength) ||
		p.Solution.Counter < 0 || p.Solution.Counter >= MaxCounter {
		return Payload{}, ErrMalformed
	}
	return p, nil
}

// isHex reports whether s is exactly n bytes in lowercase hex.
func isHex(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return false
		}
	}
	return true
}

// Proof is a checked solution: spend ID once, remembering it until Expires.
type Proof struct {
	ID      string
	Expires time.Time
}

// Verify checks a payload for identity in room, without running scrypt. It
// does not know whether the payload was spent: the caller spends Proof.ID.
func (is *Issuer) Verify(payload, room, identity string) (Proof, error) {
	p, err := Parse(payload)
	if err != nil {
		return Proof{}, err
	}
	c := p.Challenge.Parameters
	want, err := is.sign(c)
	if err != nil {
		return Proof{}, err
	}
	if !hmac.Equal([]byte(want), []byte(p.Challenge.Signature)) {
		return Proof{}, ErrForged
	}
	expires := time.Unix(c.ExpiresAt, 0)
	switch {
	case !is.now().Before(expires):
		return Proof{}, ErrExpired
	case c.Data.Room != room:
		return Proof{}, ErrWrongRoom
	case !hmac.Equal([]byte(c.Data.Sub), []byte(is.sub(identity))):
		return Proof{}, ErrWrongVisitor
	}
	key, _ := hex.DecodeString(p.Solution.DerivedKey)
	if !strings.HasPrefix(p.Solution.DerivedKey, c.KeyPrefix) ||
		!hmac.Equal([]byte(hex.EncodeToString(mac(is.keySigKey, key))), []byte(c.KeySignature)) {
		return Proof{}, ErrWrongSolution
	}
	return Proof{ID: c.Nonce, Expires: expires}, nil
}

// Encode is the payload a client sends: base64 of its JSON.
func (p Payload) Encode() string {
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(b)
}
