package token

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// t0 has a fractional second so that rounding shows.
var t0 = time.Date(2030, 5, 1, 12, 0, 0, 250_000_000, time.UTC)

// fixedKey is the same on every run, so fuzz corpora stay meaningful.
func fixedKey(name string) ed25519.PrivateKey {
	seed := sha256.Sum256([]byte("waitroom token test key " + name))
	return ed25519.NewKeyFromSeed(seed[:])
}

func mustKeyset(t testing.TB, keys ...ed25519.PrivateKey) *Keyset {
	t.Helper()
	ks, err := New(keys...)
	if err != nil {
		t.Fatal(err)
	}
	return ks
}

func validClaims() EntryClaims {
	return EntryClaims{
		Room:      "launch",
		Subject:   "v:visitor-1",
		TicketID:  "tkt-1",
		IssuedAt:  t0,
		NotBefore: t0.Add(-time.Second), // rounds up to just before t0
		ExpiresAt: t0.Add(10 * time.Minute),
	}
}

func mustSign(t testing.TB, ks *Keyset, c EntryClaims) string {
	t.Helper()
	tok, err := ks.Sign(c)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// signRaw signs any header and payload with priv, bypassing Sign's checks.
func signRaw(priv ed25519.PrivateKey, header, payload any) string {
	enc := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return base64.RawURLEncoding.EncodeToString(b)
	}
	input := enc(header) + "." + enc(payload)
	return input + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(priv, []byte(input)))
}

func wantReason(t *testing.T, err, sentinel error, reason string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted, want %v", sentinel)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("error %q does not wrap %v", err, sentinel)
	}
	if got := Reason(err); got != reason {
		t.Fatalf("Reason = %q, want %q (error %q)", got, reason, err)
	}
}

// loosePadding rewrites the last character of tok so that only its unused
// low bits change: a lax base64 decoder reads the same signature from it.
func loosePadding(tok string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, tok[len(tok)-1])
	return tok[:len(tok)-1] + string(alphabet[last|1])
}
