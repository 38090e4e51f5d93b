package pow_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/pow"
)

var t0 = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func issuer(now *time.Time) *pow.Issuer {
	return pow.NewIssuer([]byte("a deployment-wide secret"), func() time.Time { return *now })
}

func solved(t testing.TB, is *pow.Issuer, room, identity string, cost int64) pow.Payload {
	t.Helper()
	c, err := is.Issue(room, identity, cost)
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
	if p.Solution.Counter >= 30 {
		t.Fatalf("counter %d beyond the cost 30", p.Solution.Counter)
	}
	proof, err := is.Verify(p.Encode(), "sale", "v:abc")
	if err != nil {
		t.Fatal(err)
	}
	if proof.ID != p.Challenge.Parameters.Nonce || !proof.Expires.Equal(t0.Add(pow.Life)) {
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

func TestVerifyRefuses(t *testing.T) {
	now := t0
	is := issuer(&now)
	p := solved(t, is, "sale", "v:abc", 20)
	tamper := func(f func(*pow.Payload)) string {
		q := p
		f(&q)
		return q.Encode()
	}
	wrongKey := strings.Repeat("0", 64)
	cases := []struct {
		name, payload, room, identity string
		want                          error
	}{
		{"wrong room", p.Encode(), "other", "v:abc", pow.ErrWrongRoom},
		{"other visitor", p.Encode(), "sale", "v:def", pow.ErrWrongVisitor},
		{"room in data changed", tamper(func(q *pow.Payload) { q.Challenge.Parameters.Data.Room = "other" }), "other", "v:abc", pow.ErrForged},
		{"easier prefix", tamper(func(q *pow.Payload) { q.Challenge.Parameters.KeyPrefix = wrongKey[:32] }), "sale", "v:abc", pow.ErrForged},
		{"later expiry", tamper(func(q *pow.Payload) { q.Challenge.Parameters.ExpiresAt += 3600 }), "sale", "v:abc", pow.ErrForged},
		{"wrong key", tamper(func(q *pow.Payload) { q.Solution.DerivedKey = wrongKey }), "sale", "v:abc", pow.ErrWrongSolution},
		{"right prefix, wrong rest", tamper(func(q *pow.Payload) {
			q.Solution.DerivedKey = q.Challenge.Parameters.KeyPrefix + wrongKey[32:]
		}), "sale", "v:abc", pow.ErrWrongSolution},
		{"other algorithm", tamper(func(q *pow.Payload) { q.Challenge.Parameters.Algorithm = "SHA-256" }), "sale", "v:abc", pow.ErrMalformed},
		{"cheaper scrypt", tamper(func(q *pow.Payload) { q.Challenge.Parameters.Cost = 2 }), "sale", "v:abc", pow.ErrMalformed},
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

// The challenge is ALTCHA v2's: the JSON names the widget's scrypt worker reads.
func TestChallengeShape(t *testing.T) {
	now := t0
	c, err := issuer(&now).Issue("sale", "v:abc", 10)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(c)
	var m struct{ Parameters map[string]any }
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	p := m.Parameters
	for k, want := range map[string]any{"algorithm": "SCRYPT", "cost": 1024.0, "memoryCost": 8.0, "parallelism": 1.0, "keyLength": 32.0} {
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
