package pow_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/testkit"

	"github.com/waitroom/waitroom/internal/visitor/pow"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func issuer(now *time.Time) *pow.Issuer {
	return pow.NewIssuer([]byte("a deployment-wide secret"), func() time.Time { return *now })
}

func solved(t testing.TB, is *pow.Issuer, room, identity string, cost int64) pow.Payload {
	t.Helper()
	c, err := is.Issue(room, identity, pow.Price{Difficulty: cost, Base: cost})
	if err != nil {
		t.Fatal(err)
	}
	p, err := pow.Solve(context.Background(), c, 2)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSolveAndVerify(t *testing.T) {
	now := t0
	is := issuer(&now)
	p := solved(t, is, "sale", "v:abc", 30)
	proof, err := is.Verify(p.Encode(), "sale", "v:abc")
	if err != nil {
		t.Fatal(err)
	}
	if proof.ID != p.Challenge.Parameters.Nonce || !proof.Expires.Equal(t0.Add(pow.Life)) || proof.Paid != 30 {
		t.Fatalf("proof %+v", proof)
	}
	// Another server of the deployment (same secret) accepts it too; another deployment does not.
	if _, err := pow.NewIssuer([]byte("a deployment-wide secret"), func() time.Time { return now }).Verify(p.Encode(), "sale", "v:abc"); err != nil {
		t.Fatalf("same secret: %v", err)
	}
	if _, err := pow.NewIssuer([]byte("another secret"), func() time.Time { return now }).Verify(p.Encode(), "sale", "v:abc"); !errors.Is(err, pow.ErrForged) {
		t.Fatalf("other secret: %v, want forged", err)
	}
}

// A try succeeds with probability 1/difficulty: the counters found over many
// challenges average about difficulty tries (counter + 1).
func TestDifficultyIsExpectedTries(t *testing.T) {
	if testing.Short() || testkit.Race {
		t.Skip("runs ~2,000 scrypt: the full tier without -race runs it")
	}
	now := t0
	is := issuer(&now)
	const d, n = 20, 100
	var tries int64
	for range n {
		tries += solved(t, is, "sale", "v:abc", d).Solution.Counter + 1
	}
	// The mean of n geometric(1/d) draws: sd ≈ d/√n = 2.
	if mean := float64(tries) / n; mean < d-8 || mean > d+8 {
		t.Fatalf("mean tries %.1f at difficulty %d", mean, d)
	}
}

func TestTarget(t *testing.T) {
	if pow.Target(1) != 1<<48-1 {
		t.Fatalf("Target(1) = %x", pow.Target(1))
	}
	for _, c := range []struct {
		d    int64
		want string
	}{{2, "800000000000"}, {256, "010000000000"}, {pow.MaxDifficulty, "000000100000"}} {
		if got := pow.TargetHex(c.d); got != c.want {
			t.Errorf("TargetHex(%d) = %s, want %s", c.d, got, c.want)
		}
	}
	key := []byte{0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0x12}
	if !pow.Solves(key, pow.Target(256)) || pow.Solves([]byte{0x01, 0, 0, 0, 0, 0}, pow.Target(256)) {
		t.Error("Solves: the bound is strict, on the first 48 bits")
	}
}

func TestVerifyRefuses(t *testing.T) {
	now := t0
	is := issuer(&now)
	p := solved(t, is, "sale", "v:abc", 20)
	tamper := func(f func(*pow.Payload)) string {
		q := p
		f(&q)
		return q.Encode()
	}
	// A counter that does not solve it: the next ones, until one fails.
	wrong := p.Solution.Counter + 1
	nonce, salt := mustHex(t, p.Challenge.Parameters.Nonce), mustHex(t, p.Challenge.Parameters.Salt)
	for {
		k, _ := pow.DeriveKey(nonce, salt, uint32(wrong))
		if !pow.Solves(k, pow.Target(20)) {
			break
		}
		wrong++
	}
	cases := []struct {
		name, payload, room, identity string
		want                          error
	}{
		{"wrong room", p.Encode(), "other", "v:abc", pow.ErrWrongRoom},
		{"other visitor", p.Encode(), "sale", "v:def", pow.ErrWrongVisitor},
		{"room in data changed", tamper(func(q *pow.Payload) { q.Challenge.Parameters.Data.Room = "other" }), "other", "v:abc", pow.ErrForged},
		{"cheaper price", tamper(func(q *pow.Payload) {
			q.Challenge.Parameters.Difficulty, q.Challenge.Parameters.Target = 2, pow.TargetHex(2)
		}), "sale", "v:abc", pow.ErrForged},
		{"easier target alone", tamper(func(q *pow.Payload) { q.Challenge.Parameters.Target = pow.TargetHex(2) }), "sale", "v:abc", pow.ErrMalformed},
		{"later expiry", tamper(func(q *pow.Payload) { q.Challenge.Parameters.ExpiresAt += 3600 }), "sale", "v:abc", pow.ErrForged},
		{"wrong counter", tamper(func(q *pow.Payload) { q.Solution.Counter = wrong }), "sale", "v:abc", pow.ErrWrongSolution},
		{"counter out of range", tamper(func(q *pow.Payload) { q.Solution.Counter = 1 << 32 }), "sale", "v:abc", pow.ErrMalformed},
		{"other algorithm", tamper(func(q *pow.Payload) { q.Challenge.Parameters.Algorithm = "SHA-256" }), "sale", "v:abc", pow.ErrMalformed},
		{"cheaper scrypt", tamper(func(q *pow.Payload) { q.Challenge.Parameters.N = 2 }), "sale", "v:abc", pow.ErrMalformed},
		{"junk", "not base64!", "sale", "v:abc", pow.ErrMalformed},
		{"empty JSON", base64.StdEncoding.EncodeToString([]byte("{}")), "sale", "v:abc", pow.ErrMalformed},
		{"huge", strings.Repeat("A", pow.MaxPayload+1), "sale", "v:abc", pow.ErrMalformed},
	}
	for _, c := range cases {
		if _, err := is.Verify(c.payload, c.room, c.identity); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	now = t0.Add(pow.Life)
	if _, err := is.Verify(p.Encode(), "sale", "v:abc"); !errors.Is(err, pow.ErrExpired) {
		t.Errorf("expired: %v", err)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The challenge states its price, and never names the identity.
func TestChallengeShape(t *testing.T) {
	now := t0
	c, err := issuer(&now).Issue("sale", "v:abc", pow.Price{Difficulty: 1300, Base: 100, Held: 99})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	var m struct{ Parameters map[string]any }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	p := m.Parameters
	for k, want := range map[string]any{"algorithm": "SCRYPT-TARGET", "n": 1024.0, "r": 8.0, "p": 1.0, "key_length": 32.0,
		"difficulty": 1300.0, "base": 100.0, "held": 99.0, "target": pow.TargetHex(1300)} {
		if p[k] != want {
			t.Errorf("%s = %v, want %v", k, p[k], want)
		}
	}
	if strings.Contains(string(b), "v:abc") {
		t.Errorf("the challenge names the identity: %s", b)
	}
}

func TestSpentSet(t *testing.T) {
	s := pow.NewSpentSet(2)
	exp := t0.Add(time.Minute)
	if ok, _ := s.Spend("a", exp, t0); !ok {
		t.Fatal("first spend refused")
	}
	if ok, full := s.Spend("a", exp, t0); ok || full {
		t.Fatal("second spend of a accepted")
	}
	s.Spend("b", exp, t0)
	if ok, full := s.Spend("c", exp, t0); ok || !full {
		t.Fatalf("a full set took c: ok=%v full=%v", ok, full)
	}
	if ok, _ := s.Spend("c", exp, exp); !ok {
		t.Fatal("expired ids were not forgotten to make room")
	}
}

func FuzzParse(f *testing.F) {
	now := t0
	is := issuer(&now)
	p := solved(f, is, "sale", "v:abc", 5)
	f.Add(p.Encode())
	f.Add(base64.RawURLEncoding.EncodeToString([]byte(`{"challenge":{},"solution":{}}`)))
	f.Add("")
	f.Add("e30=")
	f.Add(strings.Repeat("A", 5000))
	f.Fuzz(func(t *testing.T, s string) {
		q, err := pow.Parse(s)
		if err != nil {
			return
		}
		// Whatever parses re-encodes to something that parses the same.
		r, err := pow.Parse(q.Encode())
		if err != nil || r != q {
			t.Fatalf("round trip: %v %+v %+v", err, q, r)
		}
		_, _ = is.Verify(s, "sale", "v:abc")
	})
}
