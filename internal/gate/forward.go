package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
	"github.com/waitroom/waitroom/queue"
)

// Headers of forward auth's answers. A proxy copies them where it needs
// them: the visitor's real answer when the proxy can only pass 401 on
// (nginx auth_request), and each cookie on a header of its own because a
// proxy variable holds one header line, not several Set-Cookie lines.
const (
	HeaderStatus = "Waitroom-Status" // the status the visitor is to get
	HeaderBody   = "Waitroom-Body"   // the JSON body the visitor is to get, on one line
	// HeaderSetCookie + "Token", "Visitor" or "Return" is a Set-Cookie value.
	HeaderSetCookie = "Waitroom-Set-Cookie-"
)

// forwardCookieHeaders names the gate's cookies' headers.
var forwardCookieHeaders = map[string]string{
	gatekit.TokenCookie:   HeaderSetCookie + "Token",
	gatekit.VisitorCookie: HeaderSetCookie + "Visitor",
	gatekit.ReturnCookie:  HeaderSetCookie + "Return",
}

// maxForwardBody bounds what forward auth holds of the gate's answer; the
// gate's own answers are a few hundred bytes.
const maxForwardBody = 16 << 10

// maxForwardGates bounds the per-room gates kept; past it they start over.
const maxForwardGates = 1024

// ForwardAuthConfig is forward auth's behaviour.
type ForwardAuthConfig struct {
	// Line is waitroom's line; *queue.Line.
	Line Line
	// PublicURL is waitroom's public URL: the waiting page of a room is
	// PublicURL/rooms/{room}; https makes the gate's cookies Secure.
	PublicURL    string
	CookieDomain string
	Logger       *slog.Logger
	// Challenges and NetworkIPv4Bits: as ProxyConfig's.
	Challenges      Challenges
	NetworkIPv4Bits int
}

// ForwardAuth is the gate for a proxy that asks before it forwards: nginx
// auth_request, Traefik ForwardAuth, Envoy ext_authz, HAProxy. The proxy
// sends the visitor's headers and cookies and where the visitor was going;
// ForwardAuth runs the reverse-proxy gate's decision on that request and
// answers 200 to let it through, or the gate's own answer for the visitor.
type ForwardAuth struct {
	cfg     ForwardAuthConfig
	cookies gatekit.Cookies

	mu    sync.Mutex
	gates map[string]*gatekit.Gate // per room, so each keeps its warning pace
}

// NewForwardAuth returns forward auth over cfg.Line.
func NewForwardAuth(cfg ForwardAuthConfig) (*ForwardAuth, error) {
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("gate: new forward auth: public url %q: want an absolute http(s) URL", cfg.PublicURL)
	}
	if cfg.Line == nil {
		return nil, errors.New("gate: new forward auth: line: required")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	return &ForwardAuth{cfg: cfg, gates: map[string]*gatekit.Gate{},
		cookies: gatekit.Cookies{Secure: u.Scheme == "https", Domain: cfg.CookieDomain}}, nil
}

// Refusal modes: how ForwardAuth answers a visitor who may not pass.
const (
	// RefuseAsIs answers with the gate's own status, headers and body:
	// Traefik, Envoy and HAProxy pass it to the visitor unchanged.
	RefuseAsIs = ""
	// Refuse401 answers every refusal with 401 and the real answer in
	// Waitroom-Status, Location, Retry-After and Waitroom-Body, because
	// nginx auth_request takes only 2xx, 401 and 403 from its subrequest.
	Refuse401 = "401"
)

// Original is the visitor's request as the proxy describes it.
type Original struct {
	Method string // "" for the auth request's own
	URI    string // path and query; "" for "/"
	Host   string // "" for the auth request's own
	// Client is the visitor's address, for the room's per-client limits
	// when the gate enters it: the caller's RealIP. "" counts no client.
	Client string
}

// OriginalOf reads the visitor's request from the headers proxies send:
// X-Forwarded-Method/-Uri/-Host (Traefik, and the nginx example) or
// X-Original-Method/-URI (ingress-nginx). pathSuffix is the path after the
// endpoint (Envoy ext_authz appends the visitor's path to its prefix).
func OriginalOf(h http.Header, pathSuffix string) Original {
	first := func(names ...string) string {
		for _, n := range names {
			if v := h.Get(n); v != "" {
				return v
			}
		}
		return ""
	}
	o := Original{
		Method: first("X-Forwarded-Method", "X-Original-Method"),
		URI:    first("X-Forwarded-Uri", "X-Original-URI"),
		Host:   first("X-Forwarded-Host"),
	}
	if o.URI == "" && pathSuffix != "" {
		o.URI = "/" + strings.TrimPrefix(pathSuffix, "/")
	}
	return o
}

// Check answers the proxy's question for room: may the visitor's request
// (orig, with r's headers and cookies) go on to checkout. refuse is
// RefuseAsIs or Refuse401.
func (f *ForwardAuth) Check(w http.ResponseWriter, r *http.Request, room string, orig Original, refuse string) error {
	if !queue.ValidRoomID(room) {
		return fmt.Errorf("gate: forward auth: room %q: want [a-z0-9-]{1,64}", room)
	}
	visit, err := visitorRequest(r, orig)
	if err != nil {
		return fmt.Errorf("gate: forward auth: %w", err)
	}
	if orig.Client != "" {
		visit = visit.WithContext(context.WithValue(visit.Context(), clientKey{}, network(orig.Client, f.cfg.NetworkIPv4Bits)))
	}
	rec := &recorder{header: http.Header{}}
	pass := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// onward has put the verified ticket and subject on the request.
		for _, k := range []string{gatekit.HeaderTicket, gatekit.HeaderSubject} {
			if v := r.Header.Get(k); v != "" {
				w.Header().Set(k, v)
			}
		}
		w.WriteHeader(http.StatusOK)
	})
	through := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	f.gate(room).Handler(pass, through).ServeHTTP(rec, visit)
	f.answer(w, rec, refuse)
	return nil
}

// visitorRequest is r as the visitor sent it to the proxy.
func visitorRequest(r *http.Request, o Original) (*http.Request, error) {
	uri := o.URI
	if uri == "" {
		uri = "/"
	}
	u, err := url.ParseRequestURI(uri)
	if err != nil || u.Host != "" || !strings.HasPrefix(uri, "/") {
		return nil, fmt.Errorf("original uri %q: want a path and query", uri)
	}
	v := r.Clone(r.Context())
	v.URL, v.RequestURI = u, uri
	if o.Method != "" {
		if !validMethod(o.Method) {
			return nil, fmt.Errorf("original method %q: want an HTTP method", o.Method)
		}
		v.Method = strings.ToUpper(o.Method)
	}
	if o.Host != "" {
		v.Host = o.Host
	}
	v.Body, v.ContentLength = http.NoBody, 0
	return v, nil
}

func validMethod(m string) bool {
	if m == "" || len(m) > 16 {
		return false
	}
	for _, r := range m {
		if !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z') {
			return false
		}
	}
	return true
}

func (f *ForwardAuth) gate(room string) *gatekit.Gate {
	f.mu.Lock()
	defer f.mu.Unlock()
	if g, ok := f.gates[room]; ok {
		return g
	}
	if len(f.gates) >= maxForwardGates {
		clear(f.gates)
	}
	g := gatekit.New(gatekit.Config{
		Backend:    newLineBackend(f.cfg.Line, room, f.cfg.Challenges),
		WaitingURL: f.cfg.PublicURL + "/rooms/" + room,
		Cookies:    f.cookies,
		Now:        f.cfg.Line.Now,
		Logger:     f.cfg.Logger,
	})
	f.gates[room] = g
	return g
}

// answer turns the gate's answer into the proxy's.
func (f *ForwardAuth) answer(w http.ResponseWriter, rec *recorder, refuse string) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	for _, line := range rec.header.Values("Set-Cookie") {
		h.Add("Set-Cookie", line)
		name, _, _ := strings.Cut(line, "=")
		if k, ok := forwardCookieHeaders[name]; ok {
			h.Set(k, line)
		}
	}
	code := rec.status()
	if code/100 == 2 {
		for _, k := range []string{gatekit.HeaderTicket, gatekit.HeaderSubject} {
			if v := rec.header.Get(k); v != "" {
				h.Set(k, v)
			}
		}
		w.WriteHeader(http.StatusOK)
		return
	}
	for _, k := range []string{"Location", "Retry-After", "Content-Type"} {
		if v := rec.header.Get(k); v != "" {
			h.Set(k, v)
		}
	}
	h.Set(HeaderStatus, strconv.Itoa(code))
	if refuse != Refuse401 {
		w.WriteHeader(code)
		_, _ = w.Write(rec.body.Bytes())
		return
	}
	if b := bytes.TrimSpace(rec.body.Bytes()); printable(b) && strings.HasPrefix(rec.header.Get("Content-Type"), "application/json") {
		h.Set(HeaderBody, string(b))
	}
	h.Set("WWW-Authenticate", `Waitroom realm="waitroom"`)
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write(rec.body.Bytes())
}

// printable: fit for a header value (the gate's JSON is ASCII).
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return len(b) > 0
}

// recorder keeps the gate's answer for answer to translate.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	n := min(len(b), maxForwardBody-r.body.Len())
	r.body.Write(b[:max(n, 0)])
	return len(b), nil
}

func (r *recorder) status() int {
	if r.code == 0 {
		return http.StatusOK
	}
	return r.code
}
