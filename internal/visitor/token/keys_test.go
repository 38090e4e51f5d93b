package token

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"strings"
	"testing"
)

// The example key of RFC 8037 appendix A.1 and its RFC 7638 thumbprint (A.3).
func TestThumbprintRFC8037(t *testing.T) {
	seed, err := base64.RawURLEncoding.DecodeString("nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A")
	if err != nil {
		t.Fatal(err)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	if got, want := b64(pub), "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"; got != want {
		t.Fatalf("x = %s, want %s", got, want)
	}
	if got, want := Thumbprint(pub), "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"; got != want {
		t.Fatalf("thumbprint = %s, want %s", got, want)
	}
	if got := mustKeyset(t, priv).KID(); got != "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k" {
		t.Fatalf("kid = %s", got)
	}
}

func TestPEMRoundTripKeepsOrder(t *testing.T) {
	a, b := fixedKey("a"), fixedKey("b")
	ks := mustKeyset(t, a, b)
	data, err := ks.PEM()
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(data, []byte("-----BEGIN PRIVATE KEY-----")); n != 2 {
		t.Fatalf("%d PEM blocks, want 2", n)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if back.KID() != Thumbprint(a.Public().(ed25519.PublicKey)) {
		t.Fatal("first key no longer signs after a round trip")
	}
	if len(back.PublicKeys()) != 2 {
		t.Fatalf("%d keys after round trip, want 2", len(back.PublicKeys()))
	}
}

func TestParseErrors(t *testing.T) {
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, err := x509.MarshalPKCS8PrivateKey(ecKey)
	if err != nil {
		t.Fatal(err)
	}
	good, err := mustKeyset(t, fixedKey("a")).PEM()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, data, want string
	}{
		{"empty", "", "no PEM block"},
		{"not PEM", "hello", "no PEM block"},
		{"public key", string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1}})), `"PUBLIC KEY"`},
		{"not Ed25519", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER})), "not an Ed25519 key"},
		{"bad DER", string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("junk")})), "block 1"},
		{"second block bad", string(good) + string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("junk")})), "block 2"},
		{"trailing data", string(good) + "MC4CAQAwBQYDK2VwBCIEI\n", "after the last PEM block"},
		{"same key twice", string(good) + string(good), "repeats kid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.data))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "token: parse keys: ") {
				t.Fatalf("error %q, want prefix %q and %q in it", err, "token: parse keys: ", c.want)
			}
		})
	}
}

func TestNewRefusesNoKeys(t *testing.T) {
	if _, err := New(); err == nil {
		t.Fatal("New() accepted no keys")
	}
	if _, err := New(ed25519.PrivateKey("short")); err == nil {
		t.Fatal("New accepted a short key")
	}
}

func TestGenerateMakesDistinctKeys(t *testing.T) {
	a, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	if a.KID() == b.KID() || a.KID() == "" {
		t.Fatalf("kids %q and %q", a.KID(), b.KID())
	}
}

func TestRotation(t *testing.T) {
	oldKey, newKey := fixedKey("old"), fixedKey("new")
	old := mustKeyset(t, oldKey)
	oldTok := mustSign(t, old, validClaims())

	rotated := mustKeyset(t, newKey, oldKey)
	if rotated.KID() == old.KID() {
		t.Fatal("rotated keyset still signs with the old key")
	}
	if _, err := rotated.Verify(oldTok, t0); err != nil {
		t.Fatalf("old token refused while its key is in the set: %v", err)
	}
	newTok := mustSign(t, rotated, validClaims())
	if _, err := rotated.Verify(newTok, t0); err != nil {
		t.Fatalf("new token refused: %v", err)
	}
	if _, err := old.Verify(newTok, t0); err == nil {
		t.Fatal("keyset without the new key accepted a new token")
	}

	retired := mustKeyset(t, newKey)
	_, err := retired.Verify(oldTok, t0)
	wantReason(t, err, ErrForged, "forged")
	if _, err := retired.Verify(newTok, t0); err != nil {
		t.Fatalf("new token refused after the old key left: %v", err)
	}
}
