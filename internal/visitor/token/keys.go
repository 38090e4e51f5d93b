// Package token issues and checks the JWTs of the waiting room: entry tokens
// that the room signs with Ed25519 for admitted waiters, and user tokens that
// shops with logins sign with a shared secret.
package token

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
)

// Keyset holds the room's Ed25519 keys. The first key signs; every key
// verifies and is published, so an operator rotates by putting a new key first
// and keeping the old one after it until the old tokens have expired.
type Keyset struct {
	// Issuer, when set, is the iss of every token signed and is required of
	// every token verified.
	Issuer string

	keys []key
}

type key struct {
	kid  string
	priv ed25519.PrivateKey
	pub  ed25519.PublicKey
}

// New makes a keyset of the given keys, the first of which signs.
func New(keys ...ed25519.PrivateKey) (*Keyset, error) {
	if len(keys) == 0 {
		return nil, errors.New("token: new keyset: no keys")
	}
	ks := &Keyset{}
	seen := make(map[string]bool, len(keys))
	for i, priv := range keys {
		if len(priv) != ed25519.PrivateKeySize {
			return nil, fmt.Errorf("token: new keyset: key %d has %d bytes, want %d", i+1, len(priv), ed25519.PrivateKeySize)
		}
		pub := priv.Public().(ed25519.PublicKey)
		kid := Thumbprint(pub)
		if seen[kid] {
			// A repeated key is almost surely a rotation mistake: say so
			// rather than publish one key twice.
			return nil, fmt.Errorf("token: new keyset: key %d repeats kid %s", i+1, kid)
		}
		seen[kid] = true
		ks.keys = append(ks.keys, key{kid: kid, priv: priv, pub: pub})
	}
	return ks, nil
}

// Generate makes a keyset of one new random key.
func Generate() (*Keyset, error) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("token: generate key: %w", err)
	}
	return New(priv)
}

// Parse reads one or more PKCS#8 "PRIVATE KEY" PEM blocks, signing key first.
func Parse(data []byte) (*Keyset, error) {
	var keys []ed25519.PrivateKey
	rest := data
	for n := 1; ; n++ {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "PRIVATE KEY" {
			return nil, fmt.Errorf("token: parse keys: block %d is %q, want \"PRIVATE KEY\" (PKCS#8)", n, block.Type)
		}
		k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("token: parse keys: block %d: %w", n, err)
		}
		priv, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("token: parse keys: block %d is a %T, not an Ed25519 key", n, k)
		}
		keys = append(keys, priv)
	}
	if len(keys) == 0 {
		return nil, errors.New("token: parse keys: no PEM block found")
	}
	// Text after the last block is most likely a key pasted without its
	// header: refuse it rather than silently drop a key.
	if strings.TrimSpace(string(rest)) != "" {
		return nil, errors.New("token: parse keys: data after the last PEM block")
	}
	ks, err := New(keys...)
	if err != nil {
		return nil, fmt.Errorf("token: parse keys: %w", err)
	}
	return ks, nil
}

// PEM encodes the keys as PKCS#8 PEM blocks, signing key first; Parse reads it back.
func (ks *Keyset) PEM() ([]byte, error) {
	var out []byte
	for _, k := range ks.keys {
		der, err := x509.MarshalPKCS8PrivateKey(k.priv)
		if err != nil {
			return nil, fmt.Errorf("token: encode keys: %w", err)
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})...)
	}
	return out, nil
}

// KID is the kid of the signing key, or "" for a keyset made without New.
func (ks *Keyset) KID() string {
	if len(ks.keys) == 0 {
		return ""
	}
	return ks.keys[0].kid
}

// PublicKeys maps each kid to its public key.
func (ks *Keyset) PublicKeys() map[string]ed25519.PublicKey {
	m := make(map[string]ed25519.PublicKey, len(ks.keys))
	for _, k := range ks.keys {
		m[k.kid] = k.pub
	}
	return m
}

func (ks *Keyset) lookup(kid string) (ed25519.PublicKey, bool) {
	for _, k := range ks.keys {
		if k.kid == kid {
			return k.pub, true
		}
	}
	return nil, false
}

// Thumbprint is the RFC 7638 JWK thumbprint of an Ed25519 public key, used as its kid.
func Thumbprint(pub ed25519.PublicKey) string {
	// RFC 7638 fixes the members and their order; no other member counts.
	canon := `{"crv":"Ed25519","kty":"OKP","x":"` + b64(pub) + `"}`
	sum := sha256.Sum256([]byte(canon))
	return b64(sum[:])
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }
