package dashboard

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
	"sync"
	"time"
)

// Sessions are signed cookies rather than rows in a store: every server of
// a deployment shares the admin token, so each can check a session another
// issued, and signing in still works while Redis is down, which is when an
// operator most needs the dashboard. Changing the admin token ends every
// session. Sign-out revokes the session on the server that handled it and
// clears the cookie.

const (
	sessionCookie = "wr_admin"
	loginCookie   = "wr_admin_login" // the sign-in form's CSRF token (double submit)
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

	mu      sync.Mutex
	revoked map[string]time.Time // id -> expiry, forgotten once expired
}

func newSessions(adminToken string, ttl time.Duration, now func() time.Time) *sessions {
	m := hmac.New(sha256.New, []byte(adminToken))
	m.Write([]byte("waitroom admin session v1"))
	return &sessions{key: m.Sum(nil), ttl: ttl, now: now, revoked: map[string]time.Time{}}
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

// revoke ends a session on this server.
func (s *sessions) revoke(sess session) {
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, exp := range s.revoked {
		if !now.Before(exp) {
			delete(s.revoked, id)
		}
	}
	s.revoked[sess.ID] = sess.Exp
}

// checkCSRF compares a token from a request with the session's in constant time.
func checkCSRF(sess session, got string) bool {
	return got != "" && hmac.Equal([]byte(got), []byte(sess.CSRF))
}

// randomToken is a fresh 256-bit token, for the sign-in form.
func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b64.EncodeToString(b)
}
