package queue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"
)

// Activation modes of a room.
const (
	ActivationAlways = "always" // the line is always on
	ActivationOff    = "off"    // no line: every entry is admitted at once
	// ActivationAdaptive opens the line when a load signal passes OpenAt and
	// closes it after WindowsToClose windows below CloseAt.
	ActivationAdaptive = "adaptive"
)

// activationLineClosed is never stored: it is what an adaptive room whose
// line is closed enters with.
const activationLineClosed = "adaptive (line closed)"

// Signals an adaptive room can read.
const (
	SignalPrometheus   = "prometheus"    // a PromQL instant query, e.g. checkout CPU
	SignalGateInflight = "gate_inflight" // the gate's in-flight upstream requests ÷ capacity
	SignalGateLatency  = "gate_latency"  // the gate's upstream p95 latency ÷ LatencyTargetMS
)

// Adaptive are the thresholds and signal of activation "adaptive".
type Adaptive struct {
	Signal          string  `json:"signal"`
	PrometheusURL   string  `json:"prometheus_url,omitempty"`
	Query           string  `json:"query,omitempty"`
	LatencyTargetMS int64   `json:"latency_target_ms,omitempty"`
	OpenAt          float64 `json:"open_at"`
	CloseAt         float64 `json:"close_at"`
	WindowS         int64   `json:"window_s"`
	WindowsToClose  int64   `json:"windows_to_close"`
}

// Tier says how often a waiter at or below MaxPosition hears of its place.
// A nil MaxPosition is the last tier: everyone beyond the tiers before.
type Tier struct {
	MaxPosition *int64 `json:"max_position"`
	IntervalMS  int64  `json:"interval_ms"`
}

// Settings are a room's configuration, stored in Redis as JSON so that every
// server sees the same room.
type Settings struct {
	Capacity        int64      `json:"capacity"`
	BatchSize       int64      `json:"batch_size"`
	BatchIntervalMS int64      `json:"batch_interval_ms"`
	JitterMS        int64      `json:"jitter_ms"`
	SessionTTLS     int64      `json:"session_ttl_s"`
	AbandonAfterS   int64      `json:"abandon_after_s"`
	Tiers           []Tier     `json:"tiers"`
	TargetURL       string     `json:"target_url"`
	Activation      string     `json:"activation"`
	Adaptive        *Adaptive  `json:"adaptive,omitempty"`
	Paused          bool       `json:"paused"`
	EndsAt          *time.Time `json:"ends_at,omitempty"`
	Title           string     `json:"title"`
	Message         string     `json:"message"`
	UserSecret      string     `json:"user_secret,omitempty"`
	ThemeColor      string     `json:"theme_color,omitempty"` // #rgb or #rrggbb
	LogoURL         string     `json:"logo_url,omitempty"`
	// ProductID and ProductName say what the accept page of degraded mode
	// asks for, so the intent names it (e.g. the sale's one product).
	ProductID   string `json:"product_id,omitempty"`
	ProductName string `json:"product_name,omitempty"`
	// AllowedEmbedders are the origins (scheme://host[:port], as a browser
	// writes them) whose pages may frame the room's embed.
	AllowedEmbedders []string `json:"allowed_embedders,omitempty"`
	// BotProtection is what a place in line costs a client.
	BotProtection BotProtection `json:"bot_protection"`
	// MaxQuantity caps the quantity of one intent in degraded mode; 0 is no cap.
	MaxQuantity int64 `json:"max_quantity,omitempty"`
}

// Proof-of-work switch values of BotProtection.ProofOfWork.
const (
	ProofOfWorkOn  = "on"
	ProofOfWorkOff = "off"
)

// DefaultPowCost is the work a new room asks of each entering client: the
// most scrypt runs (N=1024, r=8) a solution can take, half that on average.
// Headless Chromium on the 2-core test machine (load ~11) checked in p50
// 836 ms, p95 2.2 s over 20 visitors (docs/benchmarks.md, "Proof of work").
const DefaultPowCost = 200

// BotProtection makes a place cost a script real work and a person nothing
// they notice. The per-IP limits are off (0) by default: behind a carrier-grade
// NAT thousands of real shoppers share one address.
type BotProtection struct {
	ProofOfWork string `json:"proof_of_work"` // "on" or "off"
	PowCost     int64  `json:"pow_cost"`
	// EntersPerIPPerMinute limits enter calls per client IP (IPv6 per /64).
	EntersPerIPPerMinute int64 `json:"enters_per_ip_per_minute,omitempty"`
	// PlacesPerIP limits the live places (waiting or admitted) per client IP.
	PlacesPerIP int64 `json:"places_per_ip,omitempty"`
}

// PowOn reports whether entering needs a proof-of-work solution.
func (b BotProtection) PowOn() bool { return b.ProofOfWork != ProofOfWorkOff }

func ptr[T any](v T) *T { return &v }

// MinAbandonAfterS is the shortest abandon_after_s: open push connections
// renew a waiter's sign of life every 10 s.
const MinAbandonAfterS = 20

// DefaultTiers are the field-tested tiers: the front often, the back rarely.
func DefaultTiers() []Tier {
	return []Tier{
		{MaxPosition: ptr[int64](100), IntervalMS: 2000},
		{MaxPosition: ptr[int64](500), IntervalMS: 5000},
		{MaxPosition: nil, IntervalMS: 10000},
	}
}

// DefaultSettings returns the settings a room gets for every field left out.
func DefaultSettings() Settings {
	return Settings{
		Capacity:        100,
		BatchSize:       10,
		BatchIntervalMS: 200,
		JitterMS:        1000,
		SessionTTLS:     300,
		AbandonAfterS:   30,
		Tiers:           DefaultTiers(),
		TargetURL:       "/checkout-not-configured",
		Activation:      ActivationAlways,
		BotProtection:   BotProtection{ProofOfWork: ProofOfWorkOn, PowCost: DefaultPowCost},
	}
}

// FieldError names the setting that is wrong, so the API can say which.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

var (
	themeColorPattern = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)
)

// ValidRoomID reports whether id is a room slug: [a-z0-9-]{1,64}. It runs on
// every request, so it is a loop rather than a regexp.
func ValidRoomID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ParseSettings decodes JSON over the defaults and validates the result.
// Unknown fields are refused so that a typo does not pass silently.
func ParseSettings(data []byte) (Settings, error) {
	s := DefaultSettings()
	if err := DecodeStrict(data, &s); err != nil {
		return Settings{}, err
	}
	if err := s.Validate(); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// Validate checks every field and returns a *FieldError for the first bad one.
func (s *Settings) Validate() error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
	}
	switch {
	case s.Capacity < 1 || s.Capacity > 1_000_000:
		return bad("capacity", "must be between 1 and 1000000")
	case s.BatchSize < 1 || s.BatchSize > 10_000:
		return bad("batch_size", "must be between 1 and 10000")
	case s.BatchIntervalMS < 50 || s.BatchIntervalMS > 60_000:
		return bad("batch_interval_ms", "must be between 50 and 60000")
	case s.JitterMS < 0 || s.JitterMS > 600_000:
		return bad("jitter_ms", "must be between 0 and 600000")
	case s.SessionTTLS < 1 || s.SessionTTLS > 86_400:
		return bad("session_ttl_s", "must be between 1 and 86400")
	case s.AbandonAfterS < 1 || s.AbandonAfterS > 86_400:
		return bad("abandon_after_s", "must be between 1 and 86400")
	case s.Activation != ActivationAlways && s.Activation != ActivationOff && s.Activation != ActivationAdaptive:
		return bad("activation", "must be %q, %q or %q", ActivationAlways, ActivationOff, ActivationAdaptive)
	case len(s.Title) > 200:
		return bad("title", "must be at most 200 characters")
	case len(s.Message) > 2000:
		return bad("message", "must be at most 2000 characters")
	case len(s.ProductID) > 64:
		return bad("product_id", "must be at most 64 characters")
	case len(s.ProductName) > 200:
		return bad("product_name", "must be at most 200 characters")
	case len(s.UserSecret) > 0 && len(s.UserSecret) < 16:
		return bad("user_secret", "must be at least 16 characters when set")
	}
	if err := validateTargetURL(s.TargetURL); err != nil {
		return bad("target_url", "%v", err)
	}
	if s.ThemeColor != "" && !themeColorPattern.MatchString(s.ThemeColor) {
		return bad("theme_color", "must be #rgb or #rrggbb")
	}
	if s.LogoURL != "" {
		if err := validateTargetURL(s.LogoURL); err != nil {
			return bad("logo_url", "%v", err)
		}
	}
	if err := s.validateAdaptive(); err != nil {
		return err
	}
	if err := s.BotProtection.validate(); err != nil {
		return err
	}
	if s.MaxQuantity < 0 || s.MaxQuantity > 1_000_000 {
		return bad("max_quantity", "must be between 0 (no cap) and 1000000")
	}
	if len(s.AllowedEmbedders) > 20 {
		return bad("allowed_embedders", "must list at most 20 origins")
	}
	for i, o := range s.AllowedEmbedders {
		if err := validateOrigin(o); err != nil {
			return bad(fmt.Sprintf("allowed_embedders[%d]", i), "%v", err)
		}
	}
	if len(s.Tiers) == 0 {
		s.Tiers = DefaultTiers()
	}
	var last int64
	for i, t := range s.Tiers {
		field := fmt.Sprintf("tiers[%d]", i)
		if t.IntervalMS < 100 || t.IntervalMS > 600_000 {
			return bad(field+".interval_ms", "must be between 100 and 600000")
		}
		if t.MaxPosition == nil {
			if i != len(s.Tiers)-1 {
				return bad(field+".max_position", "only the last tier may be open-ended (null)")
			}
			continue
		}
		if *t.MaxPosition <= last {
			return bad(field+".max_position", "must be greater than the tier before")
		}
		last = *t.MaxPosition
	}
	if s.Tiers[len(s.Tiers)-1].MaxPosition != nil {
		return bad(fmt.Sprintf("tiers[%d].max_position", len(s.Tiers)-1), "the last tier must be open-ended (null)")
	}
	// A waiter who polls at its tier interval, or holds a push connection
	// (refreshed at least every MinAbandonAfterS/2), must never look abandoned.
	longest := int64(0)
	for _, t := range s.Tiers {
		longest = max(longest, t.IntervalMS)
	}
	if s.AbandonAfterS < MinAbandonAfterS || s.AbandonAfterS*1000 < 2*longest {
		return bad("abandon_after_s", "must be at least %d and at least twice the longest tier interval (%d ms)", MinAbandonAfterS, longest)
	}
	return nil
}

// maxURLLen bounds the URLs a room stores and pages carry.
const maxURLLen = 2048

// validateTargetURL accepts what a browser is sent to or loads from the
// room's pages (target_url, logo_url): an absolute http(s) URL with a host
// and no user info, or a path on this site. A path is one "/" and no "\"
// anywhere: browsers read "\" as "/" in http(s) URLs, so "/\evil.example"
// would be "//evil.example", another site, carrying wr_token off. Control
// characters and spaces are refused too, since browsers strip or drop them
// before parsing (" //evil" is "//evil"). Percent-escapes stay escaped in a
// browser ("/%5Cevil" is a path here), so they are allowed.
func validateTargetURL(raw string) error {
	return validateURL(raw, true)
}

// validateURL is validateTargetURL for browsers (paths allowed, user info
// refused), or for a server-side base URL such as prometheus_url (absolute
// only; user info is its basic auth).
func validateURL(raw string, browser bool) error {
	switch {
	case raw == "":
		return fmt.Errorf("is required")
	case len(raw) > maxURLLen:
		return fmt.Errorf("must be at most %d characters", maxURLLen)
	case strings.ContainsFunc(raw, func(r rune) bool {
		return r <= ' ' || r == 0x7f || r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r)
	}):
		return fmt.Errorf("must not contain spaces, control characters or backslashes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("is not a URL")
	}
	if u.Scheme != "" {
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("must be http or https")
		}
		if u.Host == "" || u.Opaque != "" || strings.HasPrefix(u.Host, ":") {
			return fmt.Errorf("must have a host")
		}
		if browser && u.User != nil {
			return fmt.Errorf("must not carry user info")
		}
		return nil
	}
	if browser && raw[0] == '/' && (len(raw) == 1 || raw[1] != '/') {
		return nil
	}
	if !browser {
		return fmt.Errorf("must be an absolute http(s) URL")
	}
	return fmt.Errorf("must be an absolute http(s) URL or a path starting with a single /")
}

// validateOrigin accepts an origin exactly as a browser serializes it
// (lowercase, no default port, no path), because it is compared with
// MessageEvent.origin and put into Content-Security-Policy as it is.
func validateOrigin(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("must be an origin: http(s)://host[:port]")
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.ContainsAny(raw, "?#*") {
		return fmt.Errorf("must be an origin, without path, query or wildcard: http(s)://host[:port]")
	}
	canon := u.Scheme + "://" + strings.ToLower(u.Hostname())
	if strings.Contains(u.Hostname(), ":") {
		canon = u.Scheme + "://[" + strings.ToLower(u.Hostname()) + "]"
	}
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80" || u.Scheme == "https" && p == "443") {
		canon += ":" + p
	}
	if canon != raw {
		return fmt.Errorf("must be written as the browser writes the origin: %s", canon)
	}
	return nil
}

// TierInterval is how often a waiter at position hears of it.
func (s *Settings) TierInterval(position int64) time.Duration {
	for _, t := range s.Tiers {
		if t.MaxPosition == nil || position <= *t.MaxPosition {
			return time.Duration(t.IntervalMS) * time.Millisecond
		}
	}
	return 10 * time.Second
}

// ConfiguredRate is the admission rate the pace allows, in users per second.
func (s *Settings) ConfiguredRate() float64 {
	return float64(s.BatchSize) * 1000 / float64(s.BatchIntervalMS)
}

// Closed reports whether the room no longer takes entries at now.
func (s *Settings) Closed(now time.Time) bool {
	return s.EndsAt != nil && !now.Before(*s.EndsAt)
}

// DecodeStrict decodes one JSON object into v, refusing unknown fields, and
// returns a *FieldError naming what is wrong.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonFieldError(err)
	}
	if dec.More() {
		return &FieldError{Field: "body", Message: "must hold one JSON object"}
	}
	return nil
}

func (s *Settings) validateAdaptive() error {
	if s.Activation != ActivationAdaptive {
		return nil
	}
	a := s.Adaptive
	if a == nil {
		return &FieldError{Field: "adaptive", Message: "is required with activation \"adaptive\""}
	}
	bad := func(field, msg string) error { return &FieldError{Field: "adaptive." + field, Message: msg} }
	if a.WindowS == 0 {
		a.WindowS = 60
	}
	if a.WindowsToClose == 0 {
		a.WindowsToClose = 3
	}
	switch {
	case a.Signal != SignalPrometheus && a.Signal != SignalGateInflight && a.Signal != SignalGateLatency:
		return bad("signal", "must be prometheus, gate_inflight or gate_latency")
	case a.Signal == SignalPrometheus && validateURL(a.PrometheusURL, false) != nil:
		return bad("prometheus_url", "must be the Prometheus HTTP API base URL")
	case a.Signal == SignalPrometheus && a.Query == "":
		return bad("query", "is required with signal prometheus")
	case a.Signal == SignalGateLatency && a.LatencyTargetMS <= 0:
		return bad("latency_target_ms", "must be positive with signal gate_latency")
	case a.OpenAt <= 0:
		return bad("open_at", "must be positive")
	case a.CloseAt < 0 || a.CloseAt >= a.OpenAt:
		return bad("close_at", "must be at least 0 and below open_at")
	case a.WindowS < 1 || a.WindowS > 3600:
		return bad("window_s", "must be between 1 and 3600")
	case a.WindowsToClose < 1 || a.WindowsToClose > 100:
		return bad("windows_to_close", "must be between 1 and 100")
	}
	return nil
}

func (b *BotProtection) validate() error {
	bad := func(field, msg string) error { return &FieldError{Field: "bot_protection." + field, Message: msg} }
	if b.ProofOfWork == "" {
		b.ProofOfWork = ProofOfWorkOn
	}
	if b.PowCost == 0 {
		b.PowCost = DefaultPowCost
	}
	switch {
	case b.ProofOfWork != ProofOfWorkOn && b.ProofOfWork != ProofOfWorkOff:
		return bad("proof_of_work", `must be "on" or "off"`)
	case b.PowCost < 1 || b.PowCost > 10_000_000:
		return bad("pow_cost", "must be between 1 and 10000000")
	case b.EntersPerIPPerMinute < 0 || b.EntersPerIPPerMinute > 1_000_000:
		return bad("enters_per_ip_per_minute", "must be between 0 (no limit) and 1000000")
	case b.PlacesPerIP < 0 || b.PlacesPerIP > 1_000_000:
		return bad("places_per_ip", "must be between 0 (no limit) and 1000000")
	}
	return nil
}
