package adminops

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// TestCheckTokenWantsTheBitsOfAGeneratedToken: what --create-admin-token
// and `openssl rand -hex 16` (or -base64 16) make passes; anything that
// cannot carry 128 bits, or is plainly made up, is refused with how to
// make one.
func TestCheckTokenWantsTheBitsOfAGeneratedToken(t *testing.T) {
	for i := 0; i < 1000; i++ {
		var b [16]byte
		_, _ = rand.Read(b[:])
		if strings.Trim(hex.EncodeToString(b[:]), "0123456789") == "" {
			// Hex that came out all digits (p ≈ 3·10⁻⁷ a draw) reads as a
			// decimal token of 106 bits and is refused, by design: nothing
			// tells it from one. The operator is told to make another;
			// NewToken draws again itself.
			continue
		}
		for _, tok := range []string{NewToken(), hex.EncodeToString(b[:]), strings.ToUpper(hex.EncodeToString(b[:])),
			base64.StdEncoding.EncodeToString(b[:]), base64.RawURLEncoding.EncodeToString(b[:])} {
			if err := CheckToken(tok); err != nil {
				t.Fatalf("generated %q refused: %v", tok, err)
			}
		}
	}
	for tok, why := range map[string]string{
		"":                                       "0 characters",
		"short":                                  "carry at most",
		"0123456789abcdef0123":                   "20 characters of hex carry at most 80 bits",
		"0123456789abcdef0123456789abcde":        "31 characters of hex",
		"12345678901234567890123456789012":       "of digits carry at most 106 bits",
		"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA":   "distinct characters",
		"abc123abc123abc123abc123abc123abc123":   "repeats its first 6 characters",
		"a token with spaces in it, long enough": "printable ASCII without spaces",
		"caf\u00e9caf\u00e9caf\u00e9caf\u00e9caf\u00e9caf\u00e9caf\u00e9": "printable ASCII",
		"MDEyMzQ1Njc4OWFiY2RlZg": "", // 22 base64: 132 bits
		"Tr0ub4dor&3-Tr0ub4dor&": "", // shape only: 22 printable pass
	} {
		err := CheckToken(tok)
		switch {
		case why == "" && err != nil:
			t.Errorf("%q refused: %v", tok, err)
		case why != "" && (err == nil || !strings.Contains(err.Error(), why)):
			t.Errorf("%q: error %v, want one saying %q", tok, err, why)
		case err != nil && !strings.Contains(err.Error(), "--create-admin-token"):
			t.Errorf("%q: error %v does not say how to make a token", tok, err)
		}
	}
}

func TestRightToken(t *testing.T) {
	const want = "5c1f0e7b9a2d4c6e8f0a1b3c5d7e9f21"
	for got, ok := range map[string]bool{want: true, want[:31]: false, want + "0": false, "": false, strings.ToUpper(want): false} {
		if RightToken(want, got) != ok {
			t.Errorf("RightToken(%q) = %v", got, !ok)
		}
	}
	if RightToken("", "") {
		t.Error("an empty admin token matched an empty one")
	}
}
