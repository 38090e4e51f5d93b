package token

import (
	"crypto/ed25519"
	"encoding/json"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

func TestJWKSShape(t *testing.T) {
	a, b := fixedKey("a"), fixedKey("b")
	ks := mustKeyset(t, a, b)
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	if err := json.Unmarshal(ks.JWKS(), &set); err != nil {
		t.Fatal(err)
	}
	if len(set.Keys) != 2 {
		t.Fatalf("%d keys, want 2", len(set.Keys))
	}
	for i, priv := range []ed25519.PrivateKey{a, b} {
		pub := priv.Public().(ed25519.PublicKey)
		want := map[string]string{"kty": "OKP", "crv": "Ed25519", "x": b64(pub), "kid": Thumbprint(pub), "alg": "EdDSA", "use": "sig"}
		got := set.Keys[i]
		if len(got) != len(want) {
			t.Fatalf("key %d has members %v, want exactly %v", i, got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("key %d: %s = %q, want %q", i, k, got[k], v)
			}
		}
	}
	for kid, pub := range ks.PublicKeys() {
		if Thumbprint(pub) != kid {
			t.Fatalf("PublicKeys maps %s to a key whose thumbprint is %s", kid, Thumbprint(pub))
		}
	}
}

// What checkout does: verify an entry token with nothing but the JWKS.
func TestJWKSVerifiesThroughKeyfunc(t *testing.T) {
	ks := mustKeyset(t, fixedKey("new"), fixedKey("old"))
	k, err := keyfunc.NewJWKSetJSON(ks.JWKS())
	if err != nil {
		t.Fatal(err)
	}
	parse := func(tok string) error {
		_, err := jwt.Parse(tok, k.Keyfunc,
			jwt.WithValidMethods([]string{"EdDSA"}),
			jwt.WithTimeFunc(func() time.Time { return t0.Add(time.Second) }),
		)
		return err
	}
	if err := parse(mustSign(t, ks, validClaims())); err != nil {
		t.Fatalf("token refused through the JWKS: %v", err)
	}
	oldTok := mustSign(t, mustKeyset(t, fixedKey("old")), validClaims())
	if err := parse(oldTok); err != nil {
		t.Fatalf("token of the second key refused through the JWKS: %v", err)
	}
	if err := parse(mustSign(t, mustKeyset(t, fixedKey("stranger")), validClaims())); err == nil {
		t.Fatal("token of a key outside the JWKS accepted")
	}
}
