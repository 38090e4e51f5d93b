package adminops

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math"
	"strings"
)

// MinTokenBits is the least an admin token must be able to carry. The
// admin API and the sign-in look at the token before any count of wrong
// ones (a flood must never lock the operator out), so nothing but these
// bits stops a guesser: at a million guesses a second, 2^128 take about
// 10^25 years.
const MinTokenBits = 128

// TokenHowTo says how to make a token that passes CheckToken.
const TokenHowTo = "generate one with `waitroom --create-admin-token` or `openssl rand -hex 16`"

// CheckToken says what is wrong with an admin token, or nil. Its strength
// is read from its shape, as the bits its length carries in the smallest
// usual alphabet that spells it (digits 3.3 bits a character, hex 4,
// base64 6, any other printable ASCII 6.5): 32 hex characters (16 random
// bytes) or 22 of base64 pass. A shape can only bound what a chosen string
// carries, so it also refuses the obviously made up (few distinct
// characters, a repeated piece); a token should be generated, not chosen.
func CheckToken(tok string) error {
	for _, r := range tok {
		if r <= ' ' || r > '~' {
			return fmt.Errorf("must be printable ASCII without spaces; %s", TokenHowTo)
		}
	}
	name, bits := tokenBits(tok)
	if bits < MinTokenBits {
		return fmt.Errorf("%d characters of %s carry at most %d bits, want %d or more (e.g. 32 hex characters); %s",
			len(tok), name, bits, MinTokenBits, TokenHowTo)
	}
	distinct := map[rune]bool{}
	for _, r := range tok {
		distinct[r] = true
	}
	if len(distinct) < 6 {
		return fmt.Errorf("uses only %d distinct characters, which no random token of its length does; %s", len(distinct), TokenHowTo)
	}
	for n := 1; n <= len(tok)/2; n++ {
		if len(tok)%n == 0 && strings.Repeat(tok[:n], len(tok)/n) == tok {
			return fmt.Errorf("repeats its first %d characters; %s", n, TokenHowTo)
		}
	}
	return nil
}

// tokenBits is the most entropy tok can carry, and its alphabet's name.
func tokenBits(tok string) (string, int) {
	body := strings.TrimRight(tok, "=") // base64 padding carries nothing
	only := func(set string) bool {
		return strings.Trim(body, set) == ""
	}
	const digits, lower, upper = "0123456789", "abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var name string
	var size float64
	switch {
	case only(digits):
		name, size = "digits", 10
	case only(digits + "abcdef"), only(digits + "ABCDEF"):
		name, size = "hex", 16
	case only(digits + lower + upper + "-_"), only(digits + lower + upper + "+/"):
		name, size = "base64", 64
	default:
		name, size = "printable ASCII", 94
	}
	return name, int(float64(len(body)) * math.Log2(size))
}

// NewToken draws an admin token of 128 random bits, as 32 hex characters.
func NewToken() string {
	for {
		var b [16]byte
		_, _ = rand.Read(b[:])
		if tok := hex.EncodeToString(b[:]); CheckToken(tok) == nil { // all but never fails
			return tok
		}
	}
}

// RightToken reports whether got is the admin token want (never when want
// is empty), in time that depends on neither: both are hashed first, so
// not even their lengths are compared.
func RightToken(want, got string) bool {
	if want == "" {
		return false
	}
	w, g := sha256.Sum256([]byte(want)), sha256.Sum256([]byte(got))
	return subtle.ConstantTimeCompare(w[:], g[:]) == 1
}
