package gatekit

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/waitroom/waitroom/internal/httpkit/hexid"
)

// Cookie names. wr_vid is also the name waitroom itself uses, so in proxy
// mode (one origin) the gate and the waiting page see the same visitor.
const (
	TokenCookie   = "wr_token"
	VisitorCookie = "wr_vid"
	ReturnCookie  = "wr_return"
	TokenParam    = "wr_token"
	// CodeParam carries a hand-off code (token.HandoffParam): the
	// redirect's way to the token without the token in a URL.
	CodeParam = "wr_code"
)

// Cookies are the attributes of the cookies the gate sets.
type Cookies struct {
	Secure bool   // only over HTTPS
	Domain string // "" for host-only
	// NewVisitor draws a new visitor id; nil draws 128 random bits. The
	// proxy draws waitroom's own (token.Keyset.NewVisitorID).
	NewVisitor func() string
}

func (c Cookies) set(w http.ResponseWriter, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: "/", Domain: c.Domain, MaxAge: maxAge,
		HttpOnly: true, Secure: c.Secure, SameSite: http.SameSiteLaxMode,
	})
}

func (c Cookies) clear(w http.ResponseWriter, name string) { c.set(w, name, "", -1) }

// setToken keeps the entry token for the browser session; the token's own
// exp bounds its use, so the cookie needs no age of its own.
func (c Cookies) setToken(w http.ResponseWriter, tok string) { c.set(w, TokenCookie, tok, 0) }

// visitor returns the visitor id of the request's cookie, or "".
func visitor(r *http.Request) string {
	ck, err := r.Cookie(VisitorCookie)
	if err != nil || !hexid.Valid(ck.Value) {
		return ""
	}
	return ck.Value
}

// ensureVisitor returns the request's visitor id, giving it a new one (as
// waitroom does: 128 random bits, a day) when it has none.
func (c Cookies) ensureVisitor(w http.ResponseWriter, r *http.Request) string {
	if v := visitor(r); v != "" {
		return v
	}
	var v string
	if c.NewVisitor != nil {
		v = c.NewVisitor()
	} else {
		var b [16]byte
		_, _ = rand.Read(b[:])
		v = hex.EncodeToString(b[:])
	}
	c.set(w, VisitorCookie, v, 86400)
	return v
}

// maxReturn bounds the remembered path: a cookie holds about 4 KiB.
const maxReturn = 2048

// remember keeps where a browser wanted to go, so that it comes back there
// after the line. Only this origin's path and query are kept.
func (c Cookies) remember(w http.ResponseWriter, r *http.Request) {
	dest := ""
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		dest = r.URL.RequestURI()
	default:
		// Coming back repeats a GET, not a form post: go back to the page
		// the form was on, when it was on this origin.
		if ref, err := url.Parse(r.Referer()); err == nil && ref.Host == r.Host {
			dest = ref.RequestURI()
		}
	}
	if dest = withoutToken(dest); safeReturn(dest) {
		c.set(w, ReturnCookie, base64.RawURLEncoding.EncodeToString([]byte(dest)), 3600)
	}
}

// takeReturn reads and clears the remembered path; "" when none or unsafe.
func (c Cookies) takeReturn(w http.ResponseWriter, r *http.Request) string {
	ck, err := r.Cookie(ReturnCookie)
	if err != nil {
		return ""
	}
	c.clear(w, ReturnCookie)
	b, err := base64.RawURLEncoding.DecodeString(ck.Value)
	if err != nil || !safeReturn(string(b)) {
		return ""
	}
	return string(b)
}

// safeReturn accepts only a path of this origin: no scheme or host, and
// nothing a browser would read as one ("//host", "/\host").
func safeReturn(dest string) bool {
	if dest == "" || len(dest) > maxReturn || dest[0] != '/' ||
		strings.HasPrefix(dest, "//") || strings.ContainsAny(dest, "\\\r\n\t") {
		return false
	}
	u, err := url.Parse(dest)
	return err == nil && u.Scheme == "" && u.Host == "" && u.User == nil
}

// withoutToken drops wr_token and wr_code from a request URI's query.
func withoutToken(uri string) string {
	p, q, ok := strings.Cut(uri, "?")
	if !ok {
		return uri
	}
	vals, err := url.ParseQuery(q)
	if err != nil {
		return p
	}
	vals.Del(TokenParam)
	vals.Del(CodeParam)
	if len(vals) == 0 {
		return p
	}
	return p + "?" + vals.Encode()
}

// plausibleToken accepts the JWS compact alphabet and size only, so a
// cookie is never set from arbitrary query text.
func plausibleToken(tok string) bool {
	if tok == "" || len(tok) > 4096 || strings.Count(tok, ".") != 2 {
		return false
	}
	for _, r := range tok {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

// plausibleCode accepts a hand-off code's shape only: "h." and base64url.
func plausibleCode(code string) bool {
	if len(code) < 3 || len(code) > 256 || code[:2] != "h." {
		return false
	}
	for _, r := range code[2:] {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// stripCookies removes the gate's own cookies from a request going on:
// the visitor id is a credential for the visitor's place in line, and the
// upstream has no use for it or the return path. Other cookies are kept
// byte for byte.
func stripCookies(h http.Header) {
	lines := h.Values("Cookie")
	if len(lines) == 0 {
		return
	}
	var kept []string
	for _, line := range lines {
		for pair := range strings.SplitSeq(line, ";") {
			name, _, _ := strings.Cut(pair, "=")
			switch strings.TrimSpace(name) {
			case VisitorCookie, ReturnCookie, "":
				continue
			}
			kept = append(kept, strings.TrimSpace(pair))
		}
	}
	h.Del("Cookie")
	if len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}
