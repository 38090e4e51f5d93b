package dashboard

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Sessions are signed cookies rather than rows in a store: every server of
// a deployment shares the admin token, so each can check a session another
// issued, and signing in still works while Redis is down, which is when an
// operator most needs the dashboard. Changing the admin token ends every
// session. Sign-out clears the cookie, revokes the session on this server
// and records it in Redis until the session's own expiry, which every
// server checks on every dashboard request. While Redis is down a server
// cannot see sign-outs made on others, and accepts those sessions until it
// answers again (a sign-out made meanwhile is sent once it does: on the
// next request that reaches Redis, or within two seconds).
//
// The sign-in form's CSRF token is the server's too: an HMAC of a random
// pre-session cookie and a short expiry, so no one can choose the pair.

const (
	sessionCookie = "wr_admin"
	loginCookie   = "wr_admin_login" // the sign-in form's pre-session nonce, which its CSRF token signs
	loginTTL      = 15 * time.Minute // how long a sign-in form stays good
	langCookie    = "wr_admin_lang"
	cookiePath    = "/admin"
	sessionIDLen  = 16
)

var b64 = base64.RawURLEncoding

type session struct {
	ID   string // random, base64
	Exp  time.Time
	CSRF string // derived from the id: the token forms and requests must carry
}

type sessions struct {
	key []byte
	ttl time.Duration
	now func() time.Time

	// remote records sign-outs for every server; nil keeps them here.
	remote Revocations

	mu      sync.Mutex
	revoked map[string]time.Time // id -> expiry, forgotten once expired
	unsent  map[string]time.Time // revoked here while remote failed: sent when it answers
}

func newSessions(adminToken string, ttl time.Duration, now func() time.Time, remote Revocations) *sessions {
	m := hmac.New(sha256.New, []byte(adminToken))
	m.Write([]byte("waitroom admin session v1"))
	return &sessions{key: m.Sum(nil), ttl: ttl, now: now, remote: remote,
		revoked: map[string]time.Time{}, unsent: map[string]time.Time{}}
}

func (s *sessions) mac(parts ...[]byte) []byte {
	m := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		m.Write(p)
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// issue starts a session and returns it with its cookie value.
func (s *sessions) issue() (session, string) {
	payload := make([]byte, sessionIDLen+8)
	_, _ = rand.Read(payload[:sessionIDLen]) // never fails (crypto/rand)
	exp := s.now().Add(s.ttl).Truncate(time.Second)
	binary.BigEndian.PutUint64(payload[sessionIDLen:], uint64(exp.Unix()))
	value := b64.EncodeToString(payload) + "." + b64.EncodeToString(s.mac([]byte("session"), payload))
	return s.session(payload[:sessionIDLen], exp), value
}

func (s *sessions) session(id []byte, exp time.Time) session {
	return session{ID: b64.EncodeToString(id), Exp: exp, CSRF: b64.EncodeToString(s.mac([]byte("csrf"), id))}
}

// parse checks a cookie value: signed by us, not expired, not revoked.
func (s *sessions) parse(value string) (session, bool) {
	p64, m64, ok := strings.Cut(value, ".")
	if !ok {
		return session{}, false
	}
	payload, err1 := b64.DecodeString(p64)
	mac, err2 := b64.DecodeString(m64)
	if err1 != nil || err2 != nil || len(payload) != sessionIDLen+8 {
		return session{}, false
	}
	if !hmac.Equal(mac, s.mac([]byte("session"), payload)) {
		return session{}, false
	}
	exp := time.Unix(int64(binary.BigEndian.Uint64(payload[sessionIDLen:])), 0)
	now := s.now()
	if !now.Before(exp) {
		return session{}, false
	}
	sess := s.session(payload[:sessionIDLen], exp)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, gone := s.revoked[sess.ID]; gone {
		return session{}, false
	}
	return sess, true
}

// remoteTimeout bounds a look at the sign-outs in Redis: a Redis that
// does not answer must not hold the dashboard.
const remoteTimeout = 300 * time.Millisecond

// check is parse plus the sign-outs made on every server. When Redis does
// not answer, the session stands (see the comment at the top).
func (s *sessions) check(ctx context.Context, value string) (session, bool) {
	sess, ok := s.parse(value)
	if !ok || s.remote == nil {
		return sess, ok
	}
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	gone, err := s.remote.Revoked(ctx, sess.ID)
	if err != nil {
		return sess, true
	}
	s.sendUnsent(ctx)
	return sess, !gone
}

// revoke ends a session on this server and records it for the others.
func (s *sessions) revoke(ctx context.Context, sess session) error {
	now := s.now()
	s.mu.Lock()
	for id, exp := range s.revoked {
		if !now.Before(exp) {
			delete(s.revoked, id)
			delete(s.unsent, id)
		}
	}
	s.revoked[sess.ID] = sess.Exp
	s.mu.Unlock()
	if s.remote == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, remoteTimeout)
	defer cancel()
	if err := s.remote.Revoke(ctx, sess.ID, sess.Exp); err != nil {
		s.mu.Lock()
		s.unsent[sess.ID] = sess.Exp
		s.mu.Unlock()
		return err
	}
	return nil
}

// resendUnsentEvery is how often sign-outs Redis missed are tried again.
const resendUnsentEvery = 2 * time.Second

// resendUnsent tries the sign-outs Redis missed again until ctx ends, so
// they reach the other servers even if no one uses this server's dashboard.
func (s *sessions) resendUnsent(ctx context.Context, clock clockwork.Clock) {
	if s.remote == nil {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-clock.After(resendUnsentEvery):
		}
		s.mu.Lock()
		n := len(s.unsent)
		s.mu.Unlock()
		if n > 0 {
			rctx, cancel := context.WithTimeout(ctx, remoteTimeout)
			s.sendUnsent(rctx)
			cancel()
		}
	}
}

// sendUnsent records the sign-outs Redis missed while it was down.
func (s *sessions) sendUnsent(ctx context.Context) {
	s.mu.Lock()
	pending := make(map[string]time.Time, len(s.unsent))
	for id, exp := range s.unsent {
		pending[id] = exp
	}
	s.mu.Unlock()
	now := s.now()
	for id, exp := range pending {
		if now.Before(exp) && s.remote.Revoke(ctx, id, exp) != nil {
			continue
		}
		s.mu.Lock()
		delete(s.unsent, id)
		s.mu.Unlock()
	}
}

// checkCSRF compares a token from a request with the session's in constant time.
func checkCSRF(sess session, got string) bool {
	return got != "" && hmac.Equal([]byte(got), []byte(sess.CSRF))
}

// loginForm issues a sign-in form: the pre-session cookie's value (a
// random nonce) and the form's CSRF token, which signs it and an expiry.
func (s *sessions) loginForm() (cookie, csrf string) {
	nonce := make([]byte, 32)
	_, _ = rand.Read(nonce)
	exp := make([]byte, 8)
	binary.BigEndian.PutUint64(exp, uint64(s.now().Add(loginTTL).Unix()))
	return b64.EncodeToString(nonce), b64.EncodeToString(exp) + "." + b64.EncodeToString(s.mac([]byte("login"), nonce, exp))
}

// checkLogin accepts a sign-in form's CSRF token only with the cookie it
// was issued with, signed by a server of this deployment, before expiry.
func (s *sessions) checkLogin(cookie, csrf string) bool {
	nonce, err := b64.DecodeString(cookie)
	e64, m64, ok := strings.Cut(csrf, ".")
	if err != nil || len(nonce) != 32 || !ok {
		return false
	}
	exp, err1 := b64.DecodeString(e64)
	mac, err2 := b64.DecodeString(m64)
	if err1 != nil || err2 != nil || len(exp) != 8 || !hmac.Equal(mac, s.mac([]byte("login"), nonce, exp)) {
		return false
	}
	return s.now().Before(time.Unix(int64(binary.BigEndian.Uint64(exp)), 0))
}
