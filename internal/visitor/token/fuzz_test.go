package token

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// reasonKnown reports whether a refusal carries one of the four reasons the
// API shows; anything else would reach visitors as "invalid".
func reasonKnown(err error) bool {
	switch Reason(err) {
	case "malformed", "forged", "expired", "not_yet_valid":
		return true
	}
	return false
}

// fuzzSeeds gives valid tokens and near misses. The fuzzer cannot sign, so
// any string it makes that passes must be one of the valid tokens.
func fuzzSeeds(good ...string) []string {
	var seeds []string
	for _, g := range good {
		i := strings.LastIndexByte(g, '.')
		seeds = append(seeds,
			g,
			loosePadding(g),
			g[:i+5]+"\n"+g[i+5:],
			g[:i],
			g+"x",
			strings.Replace(g, "e", "f", 1),
		)
	}
	return append(seeds, "", ".", "..", "a.b.c", "eyJhbGciOiJub25lIn0.e30.")
}

func FuzzVerify(f *testing.F) {
	ks := mustKeyset(f, fixedKey("a"), fixedKey("b"))
	now := t0.Add(time.Second)
	valid := map[string]bool{
		mustSign(f, ks, validClaims()):                           true,
		mustSign(f, mustKeyset(f, fixedKey("b")), validClaims()): true, // second key
	}
	var goods []string
	for g := range valid {
		goods = append(goods, g)
	}
	for _, s := range fuzzSeeds(goods...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		c, err := ks.Verify(tok, now)
		if err != nil {
			if !reasonKnown(err) {
				t.Fatalf("refusal without a known reason: %v", err)
			}
			return
		}
		if !valid[tok] {
			t.Fatalf("accepted a token nobody signed: %q (claims %+v)", tok, c)
		}
	})
}

func FuzzParseUserToken(f *testing.F) {
	now := t0
	valid := map[string]bool{}
	for _, c := range []jwt.MapClaims{
		{"sub": "user-42"},
		{"sub": "user-42", "exp": t0.Add(time.Hour).Unix()},
	} {
		valid[userToken(f, jwt.SigningMethodHS256, []byte(shopSecret), c)] = true
	}
	var goods []string
	for g := range valid {
		goods = append(goods, g)
	}
	for _, s := range fuzzSeeds(goods...) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		sub, err := ParseUserToken(tok, shopSecret, now)
		if err != nil {
			if !reasonKnown(err) {
				t.Fatalf("refusal without a known reason: %v", err)
			}
			return
		}
		if !valid[tok] {
			t.Fatalf("accepted a token nobody signed: %q (sub %q)", tok, sub)
		}
	})
}
