package token

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestSignVerifyRoundTrip(t *testing.T) {
	ks := mustKeyset(t, fixedKey("a"))
	c := validClaims()
	c.NotBefore = t0                                            // 12:00:00.25
	c.ExpiresAt = t0.Add(10*time.Minute + 700*time.Millisecond) // 12:10:00.95
	tok := mustSign(t, ks, c)

	got, err := ks.Verify(tok, t0.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	whole := t0.Truncate(time.Second)
	want := EntryClaims{
		Room:      c.Room,
		Subject:   c.Subject,
		TicketID:  c.TicketID,
		IssuedAt:  whole,
		NotBefore: t0,                          // kept to the millisecond: it is the jittered start
		ExpiresAt: whole.Add(10 * time.Minute), // rounded down
	}
	if got != want {
		t.Fatalf("claims\n got %+v\nwant %+v", got, want)
	}
}

func TestTokenWireFormat(t *testing.T) {
	ks := mustKeyset(t, fixedKey("a"))
	tok := mustSign(t, ks, validClaims())
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("%d segments", len(parts))
	}
	var header map[string]any
	var payload map[string]any
	for i, v := range []any{&header, &payload} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
	if header["alg"] != "EdDSA" || header["kid"] != ks.KID() {
		t.Fatalf("header %v", header)
	}
	if aud, ok := payload["aud"].(string); !ok || aud != "launch" {
		t.Fatalf("aud = %#v, want the single string \"launch\"", payload["aud"])
	}
	for _, k := range []string{"iat", "exp"} {
		if f, ok := payload[k].(float64); !ok || f != float64(int64(f)) {
			t.Fatalf("%s = %#v, want whole seconds", k, payload[k])
		}
	}
	if f, ok := payload["nbf"].(float64); !ok || int64(f*1000) != validClaims().NotBefore.UnixMilli() {
		t.Fatalf("nbf = %#v, want %d ms", payload["nbf"], validClaims().NotBefore.UnixMilli())
	}
	if payload["sub"] != "v:visitor-1" || payload["jti"] != "tkt-1" {
		t.Fatalf("payload %v", payload)
	}
	if _, ok := payload["iss"]; ok {
		t.Fatalf("iss present without an issuer: %v", payload)
	}
}

func TestSignIsDeterministic(t *testing.T) {
	ks := mustKeyset(t, fixedKey("a"))
	a := mustSign(t, ks, validClaims())
	// Sub-second differences vanish in rounding, so re-signing at read time
	// gives the very same token.
	c := validClaims()
	c.IssuedAt = c.IssuedAt.Add(100 * time.Millisecond)
	if b := mustSign(t, ks, c); a != b {
		t.Fatalf("same claims, different tokens:\n%s\n%s", a, b)
	}
	c = validClaims()
	c.TicketID = "tkt-2"
	if b := mustSign(t, ks, c); a == b {
		t.Fatal("different tickets, same token")
	}
}

func TestSignRefusesIncompleteClaims(t *testing.T) {
	ks := mustKeyset(t, fixedKey("a"))
	ks.Issuer = "https://wait.example"
	for name, edit := range map[string]func(*EntryClaims){
		"no room":        func(c *EntryClaims) { c.Room = "" },
		"no subject":     func(c *EntryClaims) { c.Subject = "" },
		"no ticket":      func(c *EntryClaims) { c.TicketID = "" },
		"no expiry":      func(c *EntryClaims) { c.ExpiresAt = time.Time{} },
		"foreign issuer": func(c *EntryClaims) { c.Issuer = "https://other.example" },
	} {
		t.Run(name, func(t *testing.T) {
			c := validClaims()
			edit(&c)
			if tok, err := ks.Sign(c); err == nil {
				t.Fatalf("signed %s", tok)
			} else if !strings.HasPrefix(err.Error(), "token: sign: ") {
				t.Fatalf("error %q lacks the token: sign: prefix", err)
			}
		})
	}
	if _, err := (&Keyset{}).Sign(validClaims()); err == nil {
		t.Fatal("a keyset without keys signed")
	}
}

func TestIssuer(t *testing.T) {
	key := fixedKey("a")
	ks := mustKeyset(t, key)
	ks.Issuer = "https://wait.example"
	tok := mustSign(t, ks, validClaims())
	got, err := ks.Verify(tok, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Issuer != ks.Issuer {
		t.Fatalf("issuer %q, want the keyset's %q", got.Issuer, ks.Issuer)
	}

	other := mustKeyset(t, key)
	other.Issuer = "https://staging.example"
	_, err = other.Verify(tok, t0)
	wantReason(t, err, ErrForged, "forged")

	// Like any required claim, a missing iss makes the token malformed.
	noIss := mustSign(t, mustKeyset(t, key), validClaims())
	_, err = ks.Verify(noIss, t0)
	wantReason(t, err, ErrMalformed, "malformed")
}

func TestValidityWindow(t *testing.T) {
	ks := mustKeyset(t, fixedKey("a"))
	c := validClaims()
	tok := mustSign(t, ks, c)
	nbf := c.NotBefore // milliseconds kept
	exp := t0.Truncate(time.Second).Add(10 * time.Minute)

	for _, now := range []time.Time{nbf, exp.Add(-time.Nanosecond)} {
		if _, err := ks.Verify(tok, now); err != nil {
			t.Fatalf("at %v: %v", now, err)
		}
	}
	_, err := ks.Verify(tok, nbf.Add(-time.Nanosecond))
	wantReason(t, err, ErrNotYetValid, "not_yet_valid")
	_, err = ks.Verify(tok, exp)
	wantReason(t, err, ErrExpired, "expired")
	_, err = ks.Verify(tok, exp.Add(time.Hour))
	wantReason(t, err, ErrExpired, "expired")
}

func TestVerifyRefuses(t *testing.T) {
	key := fixedKey("a")
	ks := mustKeyset(t, key)
	pub := key.Public().(ed25519.PublicKey)
	good := mustSign(t, ks, validClaims())
	parts := strings.Split(good, ".")
	payload := map[string]any{"aud": "launch", "sub": "v:1", "jti": "t1", "exp": t0.Add(time.Hour).Unix()}
	header := map[string]any{"alg": "EdDSA", "kid": ks.KID()}

	withHeader := func(method jwt.SigningMethod, k any, h map[string]any) string {
		tk := jwt.NewWithClaims(method, jwt.MapClaims(payload))
		for name, v := range h {
			tk.Header[name] = v
		}
		s, err := tk.SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	otherKey := fixedKey("other")
	otherKS := mustKeyset(t, otherKey)
	sigStart := len(parts[0]) + len(parts[1]) + 2
	room := strings.Replace(good, parts[1], base64.RawURLEncoding.EncodeToString(
		[]byte(`{"aud":"other-room","sub":"v:visitor-1","jti":"tkt-1","iat":1903953600,"nbf":1903953601,"exp":1903954200}`)), 1)

	cases := []struct {
		name     string
		tok      string
		sentinel error
		reason   string
	}{
		{"flipped signature byte", flip(good, sigStart+10), ErrForged, "forged"},
		{"signature of another token", parts[0] + "." + parts[1] + "." + strings.Split(mustSign(t, ks, EntryClaims{Room: "x", Subject: "s", TicketID: "t", ExpiresAt: t0.Add(time.Hour)}), ".")[2], ErrForged, "forged"},
		{"payload changed to another room", room, ErrForged, "forged"},
		{"another key, its own kid", mustSign(t, otherKS, validClaims()), ErrForged, "forged"},
		{"another key, our kid", signRaw(otherKey, header, payload), ErrForged, "forged"},
		{"unknown kid", signRaw(key, map[string]any{"alg": "EdDSA", "kid": "nope"}, payload), ErrForged, "forged"},
		{"no kid", signRaw(key, map[string]any{"alg": "EdDSA"}, payload), ErrForged, "forged"},
		{"alg none", withHeader(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, map[string]any{"kid": ks.KID()}), ErrForged, "forged"},
		{"alg none, signature kept", strings.Replace(good, parts[0], base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"`+ks.KID()+`"}`)), 1), ErrForged, "forged"},
		{"HS256 with the public key as secret", withHeader(jwt.SigningMethodHS256, []byte(pub), map[string]any{"kid": ks.KID()}), ErrForged, "forged"},
		{"HS256 with the JWKS x as secret", withHeader(jwt.SigningMethodHS256, []byte(b64(pub)), map[string]any{"kid": ks.KID()}), ErrForged, "forged"},
		{"unknown alg", signRaw(key, map[string]any{"alg": "Ed448", "kid": ks.KID()}, payload), ErrForged, "forged"},
		{"empty", "", ErrMalformed, "malformed"},
		{"garbage", "not a token", ErrMalformed, "malformed"},
		{"two segments", parts[0] + "." + parts[1], ErrMalformed, "malformed"},
		{"four segments", good + "." + parts[2], ErrMalformed, "malformed"},
		{"bad base64 header", "!!!." + parts[1] + "." + parts[2], ErrMalformed, "malformed"},
		{"header not JSON", base64.RawURLEncoding.EncodeToString([]byte("nope")) + "." + parts[1] + "." + parts[2], ErrMalformed, "malformed"},
		{"non-canonical base64 in signature", loosePadding(good), ErrMalformed, "malformed"},
		{"newline in signature", good[:sigStart+5] + "\n" + good[sigStart+5:], ErrMalformed, "malformed"},
		{"padded signature", good + "==", ErrMalformed, "malformed"},
		{"too long", good + strings.Repeat("A", maxTokenLen), ErrMalformed, "malformed"},
		{"no exp", signRaw(key, header, map[string]any{"aud": "launch", "sub": "v:1", "jti": "t1"}), ErrMalformed, "malformed"},
		{"no jti", signRaw(key, header, map[string]any{"aud": "launch", "sub": "v:1", "exp": t0.Add(time.Hour).Unix()}), ErrMalformed, "malformed"},
		{"no aud", signRaw(key, header, map[string]any{"sub": "v:1", "jti": "t1", "exp": t0.Add(time.Hour).Unix()}), ErrMalformed, "malformed"},
		{"aud as a list", signRaw(key, header, map[string]any{"aud": []string{"launch"}, "sub": "v:1", "jti": "t1", "exp": t0.Add(time.Hour).Unix()}), ErrMalformed, "malformed"},
		{"exp as a string", signRaw(key, header, map[string]any{"aud": "launch", "sub": "v:1", "jti": "t1", "exp": "soon"}), ErrMalformed, "malformed"},
		{"expired", signRaw(key, header, map[string]any{"aud": "launch", "sub": "v:1", "jti": "t1", "exp": t0.Add(-time.Second).Unix()}), ErrExpired, "expired"},
		{"before nbf", signRaw(key, header, map[string]any{"aud": "launch", "sub": "v:1", "jti": "t1", "nbf": t0.Add(time.Minute).Unix(), "exp": t0.Add(time.Hour).Unix()}), ErrNotYetValid, "not_yet_valid"},
	}
	if _, err := ks.Verify(good, t0.Add(time.Second)); err != nil {
		t.Fatalf("the unmodified token is refused: %v", err)
	}
	if _, err := ks.Verify(signRaw(key, header, payload), t0); err != nil {
		t.Fatalf("signRaw makes tokens Verify refuses, so its cases prove nothing: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ks.Verify(c.tok, t0.Add(time.Second))
			wantReason(t, err, c.sentinel, c.reason)
			if got != (EntryClaims{}) {
				t.Fatalf("claims returned with an error: %+v", got)
			}
			if !strings.HasPrefix(err.Error(), "token: verify: ") {
				t.Fatalf("error %q lacks the token: verify: prefix", err)
			}
		})
	}
}
