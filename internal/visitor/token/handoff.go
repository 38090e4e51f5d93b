package token

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"time"
)

// A hand-off code carries an admitted visitor from the waiting page to
// checkout instead of the entry token itself: the redirect's URL lands in
// access logs, browser history and the next page's Referer, and a token read
// there is a place anyone could present. The code names the ticket, lives
// HandoffTTL and is redeemed once, server to server, for the token
// (queue.Line.Redeem keeps the "once"); what leaks of it afterwards is spent.
//
// Format: "h." and base64url of: ticket length (1 byte), the ticket id,
// expiry (unix seconds, 4 bytes), a random nonce (8 bytes), and 16 bytes of
// HMAC-SHA256 over the room and all of that, under a secret derived from
// the signing key (every server of a deployment shares it).

// HandoffTTL is how long a hand-off code may be redeemed: a redirect takes
// well under a second; a minute covers a slow network and a clock's skew.
const HandoffTTL = time.Minute

// HandoffParam is the redirect's query parameter that carries the code.
const HandoffParam = "wr_code"

const (
	handoffPrefix = "h."
	handoffNonce  = 8
	handoffMAC    = 16
	maxTicketID   = 64
)

// Handoff is a parsed, authentic, unexpired hand-off code.
type Handoff struct {
	Room, Ticket string
	// Nonce tells this code from every other of the same ticket: the
	// "redeemed once" is kept per nonce, for as long as the code lives.
	Nonce   string
	Expires time.Time
}

// ErrHandoff is a code that is not one of ours, is for another room, or expired.
var ErrHandoff = errors.New("token: hand-off code: not valid")

// NewHandoff draws a fresh hand-off code for ticket of room, valid
// HandoffTTL from now. Each call draws a new one: the waiting page may hand
// its visitor another after the last was spent.
func (ks *Keyset) NewHandoff(room, ticket string, now time.Time) string {
	if len(ticket) == 0 || len(ticket) > maxTicketID {
		return ""
	}
	b := make([]byte, 0, 1+len(ticket)+4+handoffNonce+handoffMAC)
	b = append(b, byte(len(ticket)))
	b = append(b, ticket...)
	b = binary.BigEndian.AppendUint32(b, uint32(now.Add(HandoffTTL).Unix()))
	var nonce [handoffNonce]byte
	_, _ = rand.Read(nonce[:])
	b = append(b, nonce[:]...)
	b = append(b, ks.handoffMAC(0, room, b)...)
	return handoffPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// ParseHandoff checks code for room at now.
func (ks *Keyset) ParseHandoff(code, room string, now time.Time) (Handoff, error) {
	if len(code) > 2+base64.RawURLEncoding.EncodedLen(1+maxTicketID+4+handoffNonce+handoffMAC) || len(code) < 2 ||
		code[:2] != handoffPrefix {
		return Handoff{}, ErrHandoff
	}
	b, err := base64.RawURLEncoding.DecodeString(code[2:])
	if err != nil || len(b) < 1 {
		return Handoff{}, ErrHandoff
	}
	n := int(b[0])
	if n == 0 || len(b) != 1+n+4+handoffNonce+handoffMAC {
		return Handoff{}, ErrHandoff
	}
	body, mac := b[:len(b)-handoffMAC], b[len(b)-handoffMAC:]
	ok := false
	for i := range ks.keys {
		if hmac.Equal(mac, ks.handoffMAC(i, room, body)) {
			ok = true
			break
		}
	}
	if !ok {
		return Handoff{}, ErrHandoff
	}
	exp := time.Unix(int64(binary.BigEndian.Uint32(b[1+n:])), 0)
	if !now.Before(exp) {
		return Handoff{}, ErrHandoff
	}
	return Handoff{Room: room, Ticket: string(b[1 : 1+n]), Nonce: hex.EncodeToString(b[1+n+4 : 1+n+4+handoffNonce]), Expires: exp}, nil
}

func (ks *Keyset) handoffMAC(i int, room string, body []byte) []byte {
	if i >= len(ks.keys) {
		return nil
	}
	m := hmac.New(sha256.New, ks.deriveAt(i, "handoff"))
	m.Write([]byte(room))
	m.Write([]byte{0})
	m.Write(body)
	return m.Sum(nil)[:handoffMAC]
}

// ShopKey is room's shop credential: what a shop's own server (the Go
// middleware, a checkout that binds tokens to its visitors) sends as
// "Authorization: Bearer" to bind a token to a holder of its own or to
// redeem a hand-off code for one. Derived, so every server of a deployment
// knows it without storing it; one room's key opens no other room.
func (ks *Keyset) ShopKey(room string) string {
	m := hmac.New(sha256.New, ks.Derive("shop-key"))
	m.Write([]byte(room))
	return "wrs_" + hex.EncodeToString(m.Sum(nil)[:20])
}

// IsShopKey reports whether key is room's shop credential under any key of
// the keyset (a rotated-out signing key's still counts while listed).
func (ks *Keyset) IsShopKey(room, key string) bool {
	for i := range ks.keys {
		m := hmac.New(sha256.New, ks.deriveAt(i, "shop-key"))
		m.Write([]byte(room))
		if hmac.Equal([]byte(key), []byte("wrs_"+hex.EncodeToString(m.Sum(nil)[:20]))) {
			return true
		}
	}
	return false
}
