package token

import (
	"crypto/ed25519"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

const shopSecret = "shop-secret-0123456789abcdef0123"

func userToken(t testing.TB, method jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseUserToken(t *testing.T) {
	hs := func(c jwt.MapClaims) string { return userToken(t, jwt.SigningMethodHS256, []byte(shopSecret), c) }

	for name, tok := range map[string]string{
		"sub only":          hs(jwt.MapClaims{"sub": "user-42"}),
		"sub and live exp":  hs(jwt.MapClaims{"sub": "user-42", "exp": t0.Add(time.Minute).Unix()}),
		"nbf reached":       hs(jwt.MapClaims{"sub": "user-42", "nbf": t0.Add(-time.Second).Unix()}),
		"other claims kept": hs(jwt.MapClaims{"sub": "user-42", "aud": []string{"a", "b"}, "email": "x@example.com"}),
	} {
		t.Run(name, func(t *testing.T) {
			sub, err := ParseUserToken(tok, shopSecret, t0)
			if err != nil {
				t.Fatal(err)
			}
			if sub != "user-42" {
				t.Fatalf("sub = %q", sub)
			}
		})
	}

	longest := strings.Repeat("s", MaxUserSubject)
	if sub, err := ParseUserToken(hs(jwt.MapClaims{"sub": longest}), shopSecret, t0); err != nil || sub != longest {
		t.Fatalf("sub of %d bytes: %q, %v", MaxUserSubject, sub, err)
	}
}

func TestParseUserTokenRefuses(t *testing.T) {
	hs := func(c jwt.MapClaims) string { return userToken(t, jwt.SigningMethodHS256, []byte(shopSecret), c) }
	good := hs(jwt.MapClaims{"sub": "user-42"})
	cases := []struct {
		name     string
		tok      string
		sentinel error
		reason   string
	}{
		{"wrong secret", userToken(t, jwt.SigningMethodHS256, []byte("another-secret"), jwt.MapClaims{"sub": "user-42"}), ErrForged, "forged"},
		{"flipped signature", good[:len(good)-3] + map[bool]string{true: "A", false: "B"}[good[len(good)-3] != 'A'] + good[len(good)-2:], ErrForged, "forged"},
		{"HS512", userToken(t, jwt.SigningMethodHS512, []byte(shopSecret), jwt.MapClaims{"sub": "user-42"}), ErrForged, "forged"},
		{"alg none", userToken(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, jwt.MapClaims{"sub": "user-42"}), ErrForged, "forged"},
		{"EdDSA", userToken(t, jwt.SigningMethodEdDSA, ed25519.PrivateKey(fixedKey("a")), jwt.MapClaims{"sub": "user-42"}), ErrForged, "forged"},
		{"expired", hs(jwt.MapClaims{"sub": "user-42", "exp": t0.Unix()}), ErrExpired, "expired"},
		{"before nbf", hs(jwt.MapClaims{"sub": "user-42", "nbf": t0.Add(time.Minute).Unix()}), ErrNotYetValid, "not_yet_valid"},
		{"no sub", hs(jwt.MapClaims{"name": "x"}), ErrMalformed, "malformed"},
		{"empty sub", hs(jwt.MapClaims{"sub": ""}), ErrMalformed, "malformed"},
		{"sub too long", hs(jwt.MapClaims{"sub": strings.Repeat("s", MaxUserSubject+1)}), ErrMalformed, "malformed"},
		{"sub a number", hs(jwt.MapClaims{"sub": 42}), ErrMalformed, "malformed"},
		{"garbage", "garbage", ErrMalformed, "malformed"},
		{"empty", "", ErrMalformed, "malformed"},
		{"space around", " " + good + " ", ErrMalformed, "malformed"},
		{"non-canonical base64 in signature", loosePadding(good), ErrMalformed, "malformed"},
		{"newline in signature", good[:len(good)-4] + "\r\n" + good[len(good)-4:], ErrMalformed, "malformed"},
	}
	if _, err := ParseUserToken(good, shopSecret, t0); err != nil {
		t.Fatalf("the unmodified token is refused: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sub, err := ParseUserToken(c.tok, shopSecret, t0)
			wantReason(t, err, c.sentinel, c.reason)
			if sub != "" {
				t.Fatalf("sub %q returned with an error", sub)
			}
			if !strings.HasPrefix(err.Error(), "token: user: ") {
				t.Fatalf("error %q lacks the token: user: prefix", err)
			}
		})
	}
}

func TestParseUserTokenNeedsSecret(t *testing.T) {
	tok := userToken(t, jwt.SigningMethodHS256, []byte(""), jwt.MapClaims{"sub": "user-42"})
	_, err := ParseUserToken(tok, "", t0)
	if err == nil {
		t.Fatal("accepted a token signed with an empty secret")
	}
	if Reason(err) != "invalid" {
		t.Fatalf("Reason = %q: a missing room secret is not the visitor's fault", Reason(err))
	}
}
