// Package middleware is waitroom's gate for a shop's own Go server: put it
// in front of the checkout handlers and visitors without a valid entry
// token go to the line instead. Tokens are verified offline through
// waitroom's JWKS (optionally also online, to refuse completed tokens);
// waitroom's HTTP API is asked only for API clients' places in line and to
// hand slots back. It needs no Redis and no room secret.
//
// Browsers (HTML accepted) are redirected to the waiting page and come back
// through the room's target_url, which must point at this server: a GET of
// any path with ?wr_code= (a single-use hand-off code, redeemed server to
// server for the token) or ?wr_token= moves the token into a cookie and
// returns the browser to where it first wanted to go.
//
// API clients get 429 with Retry-After and their place; they keep cookies
// and simply ask again. The waitroom cookie of their browser is on another
// site, so the middleware keeps a visitor id of its own in its wr_vid
// cookie and enters the line for them server-to-server under that id (it
// is the same random 128-bit id waitroom would have set). A visitor who
// uses both the waiting page and the API therefore holds two tickets; a
// shop with logins that wants one can give waitroom user tokens instead.
// While the room's proof of work is on, a client without a place gets
// waitroom's 403 challenge (bound to that id) and sends the solution back
// in X-Waitroom-Pow, which the middleware passes on to waitroom's enter.
//
// A token belongs to one visitor: it passes offline when its sub is the
// hash of this visitor's wr_vid (the middleware entered the line for it);
// any other token is bound, online, to the visitor that redeemed its hand-off
// code, or else to the first visitor of this shop that presents it (POST
// /api/tokens/verify with a holder, authenticated with Credential), and
// refused to everyone else. An owner refused because a copy came first goes
// to the waiting page, whose fresh hand-off code takes the token back. The binding is remembered until the token's exp, and so is
// every token this middleware completed, which it refuses from then on.
package middleware

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
)

// Config is the middleware.
type Config struct {
	// WaitroomURL is where this server reaches waitroom (API and JWKS).
	WaitroomURL string
	// PublicURL is where browsers reach waitroom, for the waiting page;
	// default WaitroomURL.
	PublicURL string
	// Issuer is the iss entry tokens must carry: waitroom's --public-url;
	// default PublicURL.
	Issuer string
	// Room is the room whose line guards this server.
	Room string
	// Credential is the room's shop key (GET /admin/api/rooms/{room}/shop-key
	// with the admin token), sent as Authorization: Bearer when the middleware
	// binds a token to one of its visitors or redeems a hand-off code for
	// one: waitroom makes those bindings only for the shop. Required.
	Credential string
	// Protect are the paths that need a token (path.Match patterns, a
	// trailing "/*" covers everything below); empty guards every request
	// that reaches the middleware.
	Protect []string
	// Complete are protected paths whose 2xx answer means the order is
	// placed: the middleware then hands the slot back to waitroom.
	Complete []string
	// Online also asks waitroom (POST /api/tokens/verify) about every
	// token that verifies offline, so tokens of completed or reclaimed
	// slots are refused at once rather than at exp. One request each.
	// Without it, tokens this middleware completed are still refused, but
	// one completed through another server passes here until exp: a shop
	// with several servers should set it.
	Online bool
	// Secure marks cookies Secure: this server is reached over https.
	Secure       bool
	CookieDomain string
	// Meter measures the wrapped handler on protected paths; nil makes one.
	Meter   *Meter
	Client  *http.Client // default: 5 s timeout
	Logger  *slog.Logger
	Now     func() time.Time // checks token times; default time.Now
	Context context.Context  // ends the JWKS refresh; default Background
}

var errNoCredential = errors.New("credential: required: the room's shop key (GET /admin/api/rooms/{room}/shop-key)")

// Meter measures the protected handler: in flight and latency.
type Meter = gatekit.Meter

// MeterOptions tune a Meter.
type MeterOptions = gatekit.MeterOptions

// NewMeter returns a meter with no calls.
func NewMeter(o MeterOptions) *Meter { return gatekit.NewMeter(o) }

// New returns the middleware for net/http.
func New(cfg Config) (func(http.Handler) http.Handler, error) {
	g, meter, err := build(cfg)
	if err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		return g.Handler(meter.Handler(next), next)
	}, nil
}

func build(cfg Config) (*gatekit.Gate, *Meter, error) {
	if err := cfg.defaults(); err != nil {
		return nil, nil, fmt.Errorf("gate: middleware: %w", err)
	}
	protect, err := gatekit.ParsePatterns(cfg.Protect)
	if err != nil {
		return nil, nil, fmt.Errorf("gate: middleware: protect: %w", err)
	}
	complete, err := gatekit.ParsePatterns(cfg.Complete)
	if err != nil {
		return nil, nil, fmt.Errorf("gate: middleware: complete: %w", err)
	}
	g := gatekit.New(gatekit.Config{
		Backend:    newBackend(cfg),
		Protect:    protect,
		Complete:   complete,
		WaitingURL: cfg.PublicURL + "/rooms/" + url.PathEscape(cfg.Room),
		Cookies:    gatekit.Cookies{Secure: cfg.Secure, Domain: cfg.CookieDomain},
		Now:        cfg.Now,
		Logger:     cfg.Logger,
	})
	return g, cfg.Meter, nil
}

func (cfg *Config) defaults() error {
	base, err := absURL(cfg.WaitroomURL)
	if err != nil {
		return fmt.Errorf("waitroom url: %w", err)
	}
	cfg.WaitroomURL = base
	if cfg.PublicURL == "" {
		cfg.PublicURL = base
	}
	if cfg.PublicURL, err = absURL(cfg.PublicURL); err != nil {
		return fmt.Errorf("public url: %w", err)
	}
	if cfg.Issuer == "" {
		cfg.Issuer = cfg.PublicURL
	}
	if cfg.Room == "" {
		return errors.New("room: required")
	}
	if cfg.Meter == nil {
		cfg.Meter = NewMeter(MeterOptions{})
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 5 * time.Second}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Context == nil {
		cfg.Context = context.Background()
	}
	if cfg.Credential == "" {
		// Checked last: a Verifier needs no credential and takes the rest.
		return errNoCredential
	}
	return nil
}

func absURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%q: want an absolute http(s) URL", raw)
	}
	return strings.TrimRight(raw, "/"), nil
}
