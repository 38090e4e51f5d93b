// Package pow makes a place in line cost work: the server hands out signed
// challenges and checks their solutions without keeping state (single use is
// the store's job).
//
// The format is waitroom's own hashcash over scrypt (docs/api.md, "Proof of
// work"): a client tries counters from 0 until the first 48 bits of
// scrypt(nonce ‖ uint32be(counter), salt) are below the challenge's target;
// each try succeeds with probability 1/difficulty, so a solution takes
// difficulty scrypt runs on average. scrypt is memory-hard (1 MiB a try), so
// a GPU does not make a place cheap.
//
// Issuing a challenge costs the server an HMAC and nothing else: no key is
// made ahead of time, so there is no pool for a flood to drain. Checking a
// solution runs scrypt once, after every cheap check has passed.
//
// The difficulty is the price of the place and is stated in the challenge
// (signed, so a client cannot lower it); queue.PowPrice says what a place
// costs a network that already holds places in the room.
package pow

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/crypto/scrypt"
)

// The algorithm and its fixed parameters: 1 MiB of memory per try.
const (
	Algorithm = "SCRYPT-TARGET"
	ScryptN   = 1024
	ScryptR   = 8
	ScryptP   = 1
	KeyLength = 32
	// TargetBits: a try succeeds when the derived key's first 48 bits, read
	// big-endian, are below the target (48 bits fit a JavaScript number).
	TargetBits = 48
	// Life is how long a challenge can be solved and spent.
	Life = 5 * time.Minute
	// MaxDifficulty bounds the price of one challenge: 2^28 expected runs
	// is about eleven core-days, far beyond any place's worth, and a solver
	// runs out of counters (2^32) with negligible probability below it.
	MaxDifficulty = 1 << 28
)

// Challenge is what a client solves.
type Challenge struct {
	Parameters Parameters `json:"parameters"`
	Signature  string     `json:"signature"` // hex HMAC-SHA256 of the parameters' JSON
}

// Parameters are signed as their JSON (the field order below).
type Parameters struct {
	Algorithm string `json:"algorithm"`
	N         int    `json:"n"`
	R         int    `json:"r"`
	P         int    `json:"p"`
	KeyLength int    `json:"key_length"`
	Nonce     string `json:"nonce"` // 16 random bytes, hex: also the challenge's id
	Salt      string `json:"salt"`  // 16 random bytes, hex
	// Difficulty is the price: expected scrypt runs, 1/probability of a try.
	Difficulty int64 `json:"difficulty"`
	// Target is floor(2^48 / Difficulty) as 12 hex digits: a key whose
	// first 6 bytes are below it solves the challenge.
	Target string `json:"target"`
	// Base is the room's price of a first place: a client shows a longer
	// wait when Difficulty is above it.
	Base int64 `json:"base"`
	// Held is how many live places the client's network held in the room
	// when the challenge was issued: why Difficulty is above Base.
	Held      int64 `json:"held"`
	Data      Data  `json:"data"`
	ExpiresAt int64 `json:"expires_at"` // Unix seconds
}

// Data binds a challenge to one room and one client.
type Data struct {
	Room string `json:"room"`
	// Sub is a keyed hash of the client's identity (the visitor cookie, the
	// user or the embed key): the identity itself is a secret.
	Sub string `json:"sub"`
}

// Solution is the client's answer: the counter that solves it.
type Solution struct {
	Counter int64 `json:"counter"`
}

// Payload is what a client sends back, base64 of its JSON.
type Payload struct {
	Challenge Challenge `json:"challenge"`
	Solution  Solution  `json:"solution"`
}

// Price is what a challenge asks: Difficulty expected runs for a network
// that held Held places, in a room whose first places cost Base.
type Price struct {
	Difficulty, Base, Held int64
}

// Issuer signs challenges and checks solutions with secrets derived from one
// deployment-wide key, so any server can check what another issued.
type Issuer struct {
	sigKey, subKey []byte
	now            func() time.Time
}

// NewIssuer derives its keys from secret.
func NewIssuer(secret []byte, now func() time.Time) *Issuer {
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, secret)
		m.Write([]byte("pow/" + label))
		return m.Sum(nil)
	}
	return &Issuer{sigKey: derive("target-signature"), subKey: derive("sub"), now: now}
}

// Issue makes a challenge for identity in room at price: two random values
// and an HMAC, nothing more.
func (is *Issuer) Issue(room, identity string, price Price) (Challenge, error) {
	d := ClampDifficulty(price.Difficulty)
	nonce, salt := make([]byte, 16), make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return Challenge{}, fmt.Errorf("pow: issue: %w", err)
	}
	if _, err := rand.Read(salt); err != nil {
		return Challenge{}, fmt.Errorf("pow: issue: %w", err)
	}
	p := Parameters{
		Algorithm: Algorithm, N: ScryptN, R: ScryptR, P: ScryptP, KeyLength: KeyLength,
		Nonce: hex.EncodeToString(nonce), Salt: hex.EncodeToString(salt),
		Difficulty: d, Target: TargetHex(d), Base: max(price.Base, 1), Held: max(price.Held, 0),
		Data:      Data{Room: room, Sub: is.sub(identity)},
		ExpiresAt: is.now().Add(Life).Unix(),
	}
	sig, err := is.sign(p)
	if err != nil {
		return Challenge{}, err
	}
	return Challenge{Parameters: p, Signature: sig}, nil
}

// ClampDifficulty keeps a price within [1, MaxDifficulty].
func ClampDifficulty(d int64) int64 { return min(max(d, 1), MaxDifficulty) }

// Target is the bound a try's first 48 bits must be under at difficulty d:
// 2^48 / d, and 2^48 − 1 at d = 1, so that it is always 12 hex digits.
func Target(d int64) uint64 {
	return min((uint64(1)<<TargetBits)/uint64(ClampDifficulty(d)), 1<<TargetBits-1)
}

// TargetHex is Target as the challenge states it.
func TargetHex(d int64) string { return fmt.Sprintf("%012x", Target(d)) }

// Solves reports whether a derived key solves a challenge of target.
func Solves(key []byte, target uint64) bool {
	if len(key) < TargetBits/8 {
		return false
	}
	var b [8]byte
	copy(b[2:], key[:TargetBits/8])
	return binary.BigEndian.Uint64(b[:]) < target
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

// runs counts DeriveKey's scrypt runs.
var runs atomic.Int64

// Runs is how many scrypt runs this process has made, solving or checking:
// all the work proof of work has cost it (issuing costs none).
func Runs() int64 { return runs.Load() }

// DeriveKey is one try: scrypt(nonce ‖ uint32be(counter), salt).
func DeriveKey(nonce, salt []byte, counter uint32) ([]byte, error) {
	runs.Add(1)
	pw := binary.BigEndian.AppendUint32(append([]byte(nil), nonce...), counter)
	k, err := scrypt.Key(pw, salt, ScryptN, ScryptR, ScryptP, KeyLength)
	if err != nil {
		return nil, fmt.Errorf("pow: derive key: %w", err)
	}
	return k, nil
}
