// Package pow makes a place in line cost work: the server hands out signed
// challenges and checks their solutions without keeping state (single use is
// the store's job). The protocol is ALTCHA's v2 (the altcha npm widget 3.x and
// its scrypt worker solve it) with the memory-hard SCRYPT algorithm, so a GPU
// does not make a place cheap.
//
// The server picks a secret counter c in [0, cost) and publishes the first 16
// bytes of scrypt(nonce ‖ uint32be(c), salt) as keyPrefix; the client tries
// counters from 0 until the derived key starts with keyPrefix. On average a
// solution takes cost/2 scrypt runs, at most cost. keySignature (an HMAC of the
// full derived key) lets the server check a solution without running scrypt.
//
// Nothing in scrypt's input is bound to the room or the visitor (the signed
// data is), so a server makes its keys ahead of time in a Pool, refilled at a
// bounded rate, and issuing a challenge costs it an HMAC. A script that asks
// for challenges and never solves them then costs the server at most the
// refill's rate of scrypt runs; when the pool is empty it is told to come
// back in a moment (ErrNoChallenge).
package pow

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"golang.org/x/crypto/scrypt"
)

// The algorithm and its fixed parameters: 1 MiB of memory per try.
const (
	Algorithm   = "SCRYPT"
	ScryptN     = 1024 // "cost" in the challenge: scrypt's N
	ScryptR     = 8    // "memoryCost": scrypt's r
	ScryptP     = 1    // "parallelism"
	KeyLength   = 32
	prefixBytes = KeyLength / 2
	// Life is how long a challenge can be solved and spent.
	Life = 5 * time.Minute
	// MaxCounter bounds the work a room may ask (its pow_cost).
	MaxCounter = 1 << 24
)

// Challenge is what a client solves; its JSON is the ALTCHA v2 challenge.
type Challenge struct {
	Parameters Parameters `json:"parameters"`
	Signature  string     `json:"signature"` // hex HMAC-SHA256 of the parameters' JSON
}

// Parameters are signed as their JSON, keys sorted (the field order below).
type Parameters struct {
	Algorithm    string `json:"algorithm"`
	Cost         int    `json:"cost"`
	Data         Data   `json:"data"`
	ExpiresAt    int64  `json:"expiresAt"` // Unix seconds
	KeyLength    int    `json:"keyLength"`
	KeyPrefix    string `json:"keyPrefix"`
	KeySignature string `json:"keySignature"`
	MemoryCost   int    `json:"memoryCost"`
	Nonce        string `json:"nonce"` // 16 random bytes, hex: also the challenge's id
	Parallelism  int    `json:"parallelism"`
	Salt         string `json:"salt"`
}

// Data binds a challenge to one room and one client.
type Data struct {
	Room string `json:"room"`
	// Sub is a keyed hash of the client's identity (the visitor cookie, the
	// user or the embed key): the identity itself is a secret.
	Sub string `json:"sub"`
}

// Solution is the client's answer.
type Solution struct {
	Counter    int64   `json:"counter"`
	DerivedKey string  `json:"derivedKey"` // hex
	Time       float64 `json:"time,omitempty"`
}

// Payload is what a client sends back, base64 of its JSON.
type Payload struct {
	Challenge Challenge `json:"challenge"`
	Solution  Solution  `json:"solution"`
}

// Issuer signs challenges and checks solutions with secrets derived from one
// deployment-wide key, so any server can check what another issued.
type Issuer struct {
	sigKey, keySigKey, subKey []byte
	now                       func() time.Time
	keys                      Keys
}

// NewIssuer derives its three keys from secret. Its challenges run scrypt in
// Issue until it takes its keys From a Pool.
func NewIssuer(secret []byte, now func() time.Time) *Issuer {
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("pow/" + label))
		return m.Sum(nil)
	}
	return &Issuer{sigKey: derive("signature"), keySigKey: derive("key-signature"), subKey: derive("sub"), now: now, keys: Inline{}}
}

// From makes is take the server's half of each challenge from keys.
func (is *Issuer) From(keys Keys) *Issuer {
	is.keys = keys
	return is
}

// Issue makes a challenge for identity in room that takes up to cost tries.
// It fails with ErrNoChallenge when its pool has no key for cost ready.
func (is *Issuer) Issue(room, identity string, cost int64) (Challenge, error) {
	k, err := is.keys.Take(cost)
	if err != nil {
		return Challenge{}, fmt.Errorf("pow: issue: %w", err)
	}
	nonce, salt, key := k.Nonce, k.Salt, k.Derived
	p := Parameters{
		Algorithm: Algorithm, Cost: ScryptN, MemoryCost: ScryptR, Parallelism: ScryptP, KeyLength: KeyLength,
		Data:         Data{Room: room, Sub: is.sub(identity)},
		ExpiresAt:    is.now().Add(Life).Unix(),
		KeyPrefix:    hex.EncodeToString(key[:prefixBytes]),
		KeySignature: hex.EncodeToString(mac(is.keySigKey, key)),
		Nonce:        hex.EncodeToString(nonce),
		Salt:         hex.EncodeToString(salt),
	}
	sig, err := is.sign(p)
	if err != nil {
		return Challenge{}, err
	}
	return Challenge{Parameters: p, Signature: sig}, nil
}

func (is *Issuer) sign(p Parameters) (string, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("pow: sign: %w", err)
	}
	return hex.EncodeToString(mac(is.sigKey, b)), nil
}

func (is *Issuer) sub(identity string) string {
	return hex.EncodeToString(mac(is.subKey, []byte(identity))[:16])
}

func mac(key, msg []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(msg)
	return m.Sum(nil)
}

// DeriveKey is one try: scrypt(nonce ‖ uint32be(counter), salt).
func DeriveKey(nonce, salt []byte, counter uint32) ([]byte, error) {
	pw := binary.BigEndian.AppendUint32(append([]byte(nil), nonce...), counter)
	k, err := scrypt.Key(pw, salt, ScryptN, ScryptR, ScryptP, KeyLength)
	if err != nil {
		return nil, fmt.Errorf("pow: derive key: %w", err)
	}
	return k, nil
}
