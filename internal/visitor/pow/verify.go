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

// MaxCounter is the last counter a solution may name (uint32).
const MaxCounter = 1<<32 - 1

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
	if c.Algorithm != Algorithm || c.N != ScryptN || c.R != ScryptR || c.P != ScryptP || c.KeyLength != KeyLength ||
		!isHex(c.Nonce, 16) || !isHex(c.Salt, 16) || c.Difficulty < 1 || c.Difficulty > MaxDifficulty ||
		c.Target != TargetHex(c.Difficulty) || !isHex(p.Challenge.Signature, 32) ||
		p.Solution.Counter < 0 || p.Solution.Counter > MaxCounter {
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
// Paid is the difficulty it solved: the price the place was bought at.
type Proof struct {
	ID      string
	Expires time.Time
	Paid    int64
}

// Verify checks a payload for identity in room: every cheap check first
// (format, signature, expiry, room, visitor), then one scrypt run. It does
// not know whether the payload was spent, nor whether its price is still
// enough: the caller spends Proof.ID and compares Proof.Paid.
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
	nonce, _ := hex.DecodeString(c.Nonce)
	salt, _ := hex.DecodeString(c.Salt)
	key, err := DeriveKey(nonce, salt, uint32(p.Solution.Counter))
	if err != nil {
		return Proof{}, err
	}
	if !Solves(key, Target(c.Difficulty)) {
		return Proof{}, ErrWrongSolution
	}
	return Proof{ID: c.Nonce, Expires: expires, Paid: c.Difficulty}, nil
}

// Encode is the payload a client sends: base64 of its JSON.
func (p Payload) Encode() string {
	b, _ := json.Marshal(p)
	return base64.StdEncoding.EncodeToString(b)
}
