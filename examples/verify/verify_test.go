// Package verify holds checkout examples in other languages that verify
// waitroom's entry tokens; this test runs them against a real server.
package verify_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/waitroom/waitroom/internal/store/redisstore"
	"github.com/waitroom/waitroom/internal/testkit/redistest"
	"github.com/waitroom/waitroom/internal/testkit/tooltest"
	"github.com/waitroom/waitroom/internal/visitor/token"
	"github.com/waitroom/waitroom/queue"
	"github.com/waitroom/waitroom/server"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// verifier runs one example: its command line before the arguments.
type verifier struct {
	name string
	argv []string
}

func nodeVerifier(t *testing.T) verifier {
	node := tooltest.Need(t, "node", "apt-get install nodejs")
	if _, err := os.Stat("../../node_modules/jose/package.json"); err != nil {
		tooltest.Missing(t, "node_modules/jose (npm ci)")
	}
	return verifier{"node", []string{node, "node/verify.mjs"}}
}

// pythonVerifier prefers Debian's python3, where python3-jwt installs.
func pythonVerifier(t *testing.T) verifier {
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if path, err := exec.LookPath(p); err == nil && exec.Command(path, "-c", "import jwt, cryptography").Run() == nil {
			return verifier{"python", []string{path, "python/verify.py"}}
		}
	}
	tooltest.Missing(t, "python3 with PyJWT and cryptography (apt-get install python3-jwt python3-cryptography)")
	return verifier{}
}

type verdict struct {
	Valid    bool   `json:"valid"`
	Reason   string `json:"reason"`
	Ticket   string `json:"ticket"`
	Complete *struct {
		Status int            `json:"status"`
		Body   map[string]any `json:"body"`
	} `json:"complete"`
}

func (v verifier) run(t *testing.T, base, room, tok, visitor string, complete bool) (verdict, int) {
	t.Helper()
	args := append(append([]string(nil), v.argv[1:]...), base, room, tok, visitor)
	if complete {
		args = append(args, "--complete")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, v.argv[0], args...).Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
		if code == 2 {
			t.Fatalf("%s: usage or network error:\n%s", v.name, ee.Stderr)
		}
	} else if err != nil {
		t.Fatalf("%s: %v", v.name, err)
	}
	var vd verdict
	if err := json.Unmarshal(out, &vd); err != nil {
		t.Fatalf("%s printed %q: %v", v.name, out, err)
	}
	return vd, code
}

// TestVerifiersInOtherLanguages: the Node (jose) and Python (PyJWT)
// checkouts verify a real entry token through the JWKS, refuse a forged,
// an expired, a foreign room's and a copied one, and complete the slot,
// after which waitroom refuses the token.
func TestVerifiersInOtherLanguages(t *testing.T) {
	for name, mk := range map[string]func(*testing.T) verifier{"node": nodeVerifier, "python": pythonVerifier} {
		t.Run(name, func(t *testing.T) { checkVerifier(t, mk(t)) })
	}
}

func checkVerifier(t *testing.T, v verifier) {
	rdb := redistest.Shared(t).Client(t)
	keys, err := token.Generate()
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(nil)
	base := "http://" + ts.Listener.Addr().String()
	keys.Issuer = base
	line := queue.NewLine(redisstore.New(rdb, redistest.Prefix(t)), keys, queue.LineOptions{})
	ts.Config.Handler = server.New(line, server.Config{AdminToken: "test-admin-token-0123456789"})
	ts.Start()
	t.Cleanup(ts.Close)
	ctx := context.Background()
	for _, room := range []string{"sale", "other"} {
		s := queue.DefaultSettings()
		s.JitterMS = 0 // the turn starts at once: verify now
		s.BotProtection.ProofOfWork = queue.ProofOfWorkOff
		if err := line.PutRoom(ctx, room, s); err != nil {
			t.Fatal(err)
		}
	}
	enter := func(room string) (tok, visitor string) {
		jar, _ := cookiejar.New(nil)
		c := &http.Client{Jar: jar}
		res, err := c.Post(base+"/api/rooms/"+room+"/enter", "application/json", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var tk struct{ Token, State string }
		if err := json.NewDecoder(res.Body).Decode(&tk); err != nil || tk.State != "admitted" {
			t.Fatalf("enter %s: %v %+v", room, err, tk)
		}
		u, _ := url.Parse(base)
		for _, ck := range jar.Cookies(u) {
			if ck.Name == "wr_vid" {
				visitor = ck.Value
			}
		}
		return tk.Token, visitor
	}
	tok, alice := enter("sale")
	foreign, _ := enter("other")
	_, bob := enter("sale")
	other, _ := token.Generate()
	now := time.Now()
	forged, _ := other.Sign(token.EntryClaims{Issuer: base, Room: "sale", Subject: "x", TicketID: "t", NotBefore: now, ExpiresAt: now.Add(time.Minute)})
	expired, _ := keys.Sign(token.EntryClaims{Issuer: base, Room: "sale", Subject: "x", TicketID: "t",
		IssuedAt: now.Add(-time.Hour), NotBefore: now.Add(-time.Hour), ExpiresAt: now.Add(-time.Minute)})

	for _, c := range []struct {
		name, tok, visitor, reason string
	}{
		{"forged", forged, alice, "forged"},
		{"expired", expired, alice, "expired"},
		{"foreign room", foreign, alice, "wrong_room"},
		{"copied to another visitor", tok, bob, "copied"},
		{"garbage", "not.a.token", alice, ""},
	} {
		vd, code := v.run(t, base, "sale", c.tok, c.visitor, false)
		if vd.Valid || code != 1 || (c.reason != "" && vd.Reason != c.reason) {
			t.Errorf("%s: %s token: %+v exit %d, want refused as %q", v.name, c.name, vd, code, c.reason)
		}
	}
	vd, code := v.run(t, base, "sale", tok, alice, true)
	if !vd.Valid || code != 0 || vd.Ticket == "" || vd.Complete == nil || vd.Complete.Status != 200 || vd.Complete.Body["completed"] != true {
		t.Fatalf("%s: the visitor's own token: %+v exit %d, want valid and completed", v.name, vd, code)
	}
	// Completed: waitroom frees the slot and refuses the token from now on.
	vd, code = v.run(t, base, "sale", tok, alice, true)
	if code != 1 || vd.Complete == nil || vd.Complete.Status != http.StatusConflict {
		t.Errorf("%s: completing twice: %+v exit %d, want 409 from waitroom", v.name, vd, code)
	}
	if !strings.HasPrefix(tok, "ey") {
		t.Errorf("token %q is not a JWS", tok)
	}
}
