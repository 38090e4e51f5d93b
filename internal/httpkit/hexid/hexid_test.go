package hexid

import (
	"crypto/rand"
	"encoding/hex"
	"testing"
)

func TestValid(t *testing.T) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	good := hex.EncodeToString(b[:])
	cases := map[string]bool{
		good:                                   true,
		"0123456789abcdef0123456789abcdef":     true,
		"0123456789ABCDEF0123456789abcdef":     false, // one spelling: lower case
		"0123456789abcdef0123456789abcde":      false,
		"0123456789abcdef0123456789abcdef0":    false,
		"0123456789abcdeg0123456789abcdef":     false,
		"":                                     false,
		"0123456789abcdef0123456789abcd\u00e9": false, // 32 bytes, not 32 hex
	}
	for id, want := range cases {
		if got := Valid(id); got != want {
			t.Errorf("Valid(%q) = %v, want %v", id, got, want)
		}
	}
}

// FuzzValid: Valid agrees with a hex round trip of 16 bytes and never panics.
func FuzzValid(f *testing.F) {
	for _, s := range []string{"", "0123456789abcdef0123456789abcdef", "0123456789ABCDEF0123456789abcdef", "zz", "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		b, err := hex.DecodeString(id)
		want := err == nil && len(b) == 16 && hex.EncodeToString(b) == id
		if got := Valid(id); got != want {
			t.Fatalf("Valid(%q) = %v, hex round trip says %v", id, got, want)
		}
	})
}
