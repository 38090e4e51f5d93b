package gate

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	"github.com/waitroom/waitroom/internal/gate/gatekit"
	"github.com/waitroom/waitroom/internal/visitor/clientip"
	"github.com/waitroom/waitroom/queue"
)

// ProxyConfig is the reverse-proxy mode.
type ProxyConfig struct {
	// Upstream is the checkout every request goes on to.
	Upstream *url.URL
	// Protect are the paths that need an entry token: path.Match patterns,
	// where a trailing "/*" covers everything below ("/checkout/*",
	// "/api/orders"). Other paths pass straight through, unmeasured.
	Protect []string
	// Complete are protected paths whose 2xx answer means the order is
	// placed: the gate then frees the visitor's slot, so checkout needs no
	// change to hand it back. Empty: slots free on session_ttl_s, or when
	// checkout calls POST /api/rooms/{room}/complete itself.
	Complete []string
	// Room is the room whose line guards the upstream.
	Room string
	// Challenges counts the solutions (X-Waitroom-Pow) a client network
	// sends, against waitroom's --challenges-per-ip; nil: no limit.
	Challenges Challenges
	// NetworkIPv4Bits is the IPv4 prefix a client network is counted by
	// for its price and Challenges (--network-ipv4-prefix; 0 or 32: each address).
	NetworkIPv4Bits int
	// Line is waitroom's line; *queue.Line.
	Line Line
	// PublicURL is waitroom's public URL: the waiting page is
	// PublicURL/rooms/{Room}; https makes the gate's cookies Secure.
	PublicURL string
	// CookieDomain widens the gate's cookies to a parent domain; "" keeps
	// them on the host.
	CookieDomain string
	// PreserveHost sends the visitor's Host to the upstream instead of the
	// upstream's own (X-Forwarded-Host is set either way).
	PreserveHost bool
	// Meter measures protected upstream calls; nil makes one of its own.
	Meter *Meter
	// Transport reaches the upstream; nil uses a clone of http.DefaultTransport.
	Transport http.RoundTripper
	// ClientIP names the client of a request for the room's per-client
	// limits (clientip.Extractor of --trusted-proxies); nil: the peer.
	ClientIP func(*http.Request) string
	Logger   *slog.Logger
}

// NewProxy returns the gate in front of cfg.Upstream.
func NewProxy(cfg ProxyConfig) (http.Handler, error) {
	if err := cfg.check(); err != nil {
		return nil, fmt.Errorf("gate: new proxy: %w", err)
	}
	protect, err := gatekit.ParsePatterns(cfg.Protect)
	if err != nil {
		return nil, fmt.Errorf("gate: new proxy: protect: %w", err)
	}
	if protect.Empty() {
		return nil, errors.New("gate: new proxy: protect: no path to protect")
	}
	complete, err := gatekit.ParsePatterns(cfg.Complete)
	if err != nil {
		return nil, fmt.Errorf("gate: new proxy: complete: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Meter == nil {
		cfg.Meter = NewMeter(MeterOptions{})
	}
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	public := strings.TrimRight(cfg.PublicURL, "/")
	g := gatekit.New(gatekit.Config{
		Backend:    newLineBackend(cfg.Line, cfg.Room, cfg.Challenges),
		Protect:    protect,
		Complete:   complete,
		WaitingURL: public + "/rooms/" + cfg.Room,
		Cookies: gatekit.Cookies{Secure: strings.HasPrefix(public, "https://"), Domain: cfg.CookieDomain,
			NewVisitor: cfg.Line.Keys().NewVisitorID},
		Now:    cfg.Line.Now,
		Logger: cfg.Logger,
	})
	through := cfg.reverseProxy(cfg.Transport)
	pass := cfg.reverseProxy(cfg.Meter.Transport(cfg.Transport))
	if cfg.ClientIP == nil {
		cfg.ClientIP = clientip.Peer
	}
	return withClient(g.Handler(pass, through), cfg.ClientIP, cfg.NetworkIPv4Bits), nil
}

func (cfg *ProxyConfig) check() error {
	switch {
	case cfg.Upstream == nil || (cfg.Upstream.Scheme != "http" && cfg.Upstream.Scheme != "https") || cfg.Upstream.Host == "":
		return errors.New("upstream: want an absolute http(s) URL")
	case !queue.ValidRoomID(cfg.Room):
		return fmt.Errorf("room %q: want [a-z0-9-]{1,64}", cfg.Room)
	case cfg.Line == nil:
		return errors.New("line: required")
	}
	u, err := url.Parse(cfg.PublicURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("public url %q: want an absolute http(s) URL", cfg.PublicURL)
	}
	return nil
}

// reverseProxy forwards to the upstream through rt. Rewrite (not Director)
// drops hop-by-hop and client-sent X-Forwarded-* headers before setting its
// own, so a client cannot pose as another address.
func (cfg *ProxyConfig) reverseProxy(rt http.RoundTripper) *httputil.ReverseProxy {
	log := cfg.Logger
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(cfg.Upstream)
			pr.SetXForwarded()
			if cfg.PreserveHost {
				pr.Out.Host = pr.In.Host
			}
		},
		Transport: rt,
		ErrorLog:  slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if r.Context().Err() == nil {
				log.Warn("gate: upstream", "path", r.URL.Path, "err", err)
			}
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte(`{"error":{"code":"bad_gateway","message":"checkout did not answer"}}` + "\n"))
		},
	}
}
