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

	"github.com/waitroom/waitroom/internal/vocab"
)

// Activation modes of a room (internal/vocab defines them).
type Activation = vocab.Activation

const (
	ActivationAlways   = vocab.ActivationAlways
	ActivationOff      = vocab.ActivationOff
	ActivationAdaptive = vocab.ActivationAdaptive
)

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
	Activation      Activation `json:"activation"`
	Adaptive        *Adaptive  `json:"adaptive,omitempty"`
	Paused          bool       `json:"paused"`
	EndsAt          *time.Time `json:"ends_at,omitempty"`
	// OpensAt is a scheduled opening: before it entries go to the pre-queue,
	// at it the pre-queue is drawn in random order (draw.go).
	OpensAt    *time.Time `json:"opens_at,omitempty"`
	Title      LocalText  `json:"title"`
	Message    LocalText  `json:"message"`
	UserSecret string     `json:"user_secret,omitempty"`
	ThemeColor string     `json:"theme_color,omitempty"` // #rgb or #rrggbb
	LogoURL    string     `json:"logo_url,omitempty"`
	// ShopURL is the way back to the shop from the pages that end a visit
	// (sold out, closed).
	ShopURL string `json:"shop_url,omitempty"`
	// ProductID and ProductName say what the accept page of degraded mode
	// asks for, so the intent names it (e.g. the sale's one product).
	ProductID   string    `json:"product_id,omitempty"`
	ProductName LocalText `json:"product_name,omitzero"`
	// AllowedEmbedders are the origins (scheme://host[:port], as a browser
	// writes them) whose pages may frame the room's embed.
	AllowedEmbedders []string `json:"allowed_embedders,omitempty"`
	// BotProtection is what a place in line costs a client.
	BotProtection BotProtection `json:"bot_protection"`
	// MaxQuantity caps the quantity of one intent in degraded mode; 0 is no
	// cap (so it is always written: left out is DefaultMaxQuantity).
	MaxQuantity int64 `json:"max_quantity"`
	// CheckoutAfterIntent lets a visitor whose degraded-mode intent stands
	// (not rejected) also take a place and be admitted to checkout once the
	// line is back; off, such a visitor is answered state "ordered".
	CheckoutAfterIntent bool `json:"checkout_after_intent"`
	// QueueingMethod is how the line admits (internal/vocab's Method).
	QueueingMethod Method `json:"queueing_method"`
	// SoldOut ends the sale until undone: waiters keep their places unseen.
	SoldOut        bool      `json:"sold_out"`
	SoldOutMessage LocalText `json:"sold_out_message,omitzero"`
	// MaxWaiting is the most people in line; 0 is no limit.
	MaxWaiting int64 `json:"max_waiting,omitempty"`
	// ArrivalWindowS: an admitted visitor who has not come to checkout this
	// long after orderable_at loses the slot (0: off). IdleAfterS: one who
	// came and then made no request at the gate this long loses it (0: off).
	ArrivalWindowS int64 `json:"arrival_window_s"`
	IdleAfterS     int64 `json:"idle_after_s"`
}

// Method is a room's queueing method (internal/vocab defines them).
type Method = vocab.Method

const (
	MethodFIFO        = vocab.MethodFIFO
	MethodRandom      = vocab.MethodRandom
	MethodPassthrough = vocab.MethodPassthrough
	MethodReject      = vocab.MethodReject
)

// Proof-of-work switch values of BotProtection.ProofOfWork.
const (
	ProofOfWorkOn  = "on"
	ProofOfWorkOff = "off"
)

// DefaultPowCost is the work a new room asks of each entering client for
// its network's first places: expected scrypt runs (N=1024, r=8), the same
// average as the 200 at most of the format before; further places of one
// network cost more (PowPrice). docs/benchmarks.md, "Proof of work" and
// "A place's price per network", has headless Chromium's times.
const DefaultPowCost = 100

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
	// UnarrivedPerNetwork is the most admitted slots one client network
	// holds whose visitors have not yet come to checkout (arrival_window_s):
	// its further places keep their turn until one arrives or lapses. 0 is
	// no limit (so it is always written: left out is the default).
	UnarrivedPerNetwork int64 `json:"unarrived_per_network"`
}

// DefaultUnarrivedPerNetwork is unarrived_per_network's default: people
// behind one address come to checkout within seconds of their turn, so five
// at once delays a carrier-grade NAT's next visitor by those seconds, while
// a squatter that never comes holds five slots an arrival window, not one
// per place it bought.
const DefaultUnarrivedPerNetwork = 5

// PowOn reports whether entering needs a proof-of-work solution.
func (b BotProtection) PowOn() bool { return b.ProofOfWork != ProofOfWorkOff }

func ptr[T any](v T) *T { return &v }

// DefaultArrivalWindowS is how long a new room's admitted visitor has to
// come to checkout after orderable_at: a squatter's slot lasts this long,
// not session_ttl_s.
const DefaultArrivalWindowS = 60

// MinAbandonAfterS is the shortest abandon_after_s: open push connections
// renew a waiter's sign of life every 10 s.
const MinAbandonAfterS = 20

// DefaultMaxQuantity is max_quantity's default: while Redis is down an
// intent is a claim on stock that no line paces, so one visitor's claim
// stays small unless the operator says otherwise (0: no cap).
const DefaultMaxQuantity = 4

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
		ArrivalWindowS:  DefaultArrivalWindowS,
		Tiers:           DefaultTiers(),
		TargetURL:       "/checkout-not-configured",
		Activation:      ActivationAlways,
		QueueingMethod:  MethodFIFO,
		BotProtection:   BotProtection{ProofOfWork: ProofOfWorkOn, PowCost: DefaultPowCost, UnarrivedPerNetwork: DefaultUnarrivedPerNetwork},
		MaxQuantity:     DefaultMaxQuantity,
	}
}

// FormKind says how the dashboard's room form shows and reads a setting.
type FormKind string

// Form kinds of SettingField.
const (
	KindText     FormKind = "text"
	KindLongText FormKind = "longtext" // kept as typed, spaces included
	KindNumber   FormKind = "number"   // a whole number
	KindDecimal  FormKind = "decimal"
	KindBool     FormKind = "bool"
	KindURL      FormKind = "url"
	KindColour   FormKind = "colour"
	KindDateTime FormKind = "datetime" // RFC 3339 in JSON; UTC in the form
	KindSelect   FormKind = "select"   // one of Choices
	KindList     FormKind = "list"     // strings; the form separates them by commas or spaces
	KindTiers    FormKind = "tiers"    // position tier → interval rows
	KindGroup    FormKind = "group"    // a nested object of Fields
	KindSecret   FormKind = "secret"   // never shown again; empty keeps it
)

// Sections of the dashboard's room form, in order.
const (
	SectionBasics     = "basics"
	SectionPace       = "pace"
	SectionLook       = "look"
	SectionProtection = "protection"
	SectionAdaptive   = "adaptive"
)

// SettingSections are the form's sections in order.
var SettingSections = []string{SectionBasics, SectionPace, SectionLook, SectionProtection, SectionAdaptive}

// SettingField declares one setting: everything that adding a setting would
// otherwise spread over the checks, the dashboard's form, the catalogue and
// the docs. It is a table rather than struct tags because checks are code
// and a group's members need an order; TestEverySettingIsDeclared ties the
// table to the struct, so a field cannot be added to one alone.
type SettingField struct {
	// Name is the JSON name; a group member's is "group.member", which is
	// also its form input and the path the API's errors name.
	Name    string
	Section string
	Kind    FormKind
	Choices []string // KindSelect; "" is "none" (the group is left out)
	// ChoicePrefix is the catalogue prefix of the choices' labels.
	ChoicePrefix string
	Help         bool           // the catalogue has HelpKey
	Doc          string         // the meaning column of docs/api.md
	Fields       []SettingField // KindGroup's members
	// PerLang marks a LocalText (KindText or KindLongText): the form has an
	// input per language, the API takes a string or an object by language.
	PerLang bool
	// check reports what is wrong with the field's value in s.
	check func(s *Settings) error
	// applies tells whether a group's members are checked at all.
	applies func(s *Settings) bool
}

// JSONName is the field's name inside its object.
func (f SettingField) JSONName() string { return f.Name[strings.LastIndexByte(f.Name, '.')+1:] }

// LabelKey is the catalogue key of the field's label.
func (f SettingField) LabelKey() string { return "admin.field." + f.Name }

// HelpKey is the catalogue key of the field's help text, or "".
func (f SettingField) HelpKey() string {
	if !f.Help {
		return ""
	}
	return f.LabelKey() + ".help"
}

// ChoiceKey is the catalogue key of a choice's label.
func (f SettingField) ChoiceKey(choice string) string {
	if choice == "" {
		return "admin.choice.none"
	}
	return f.ChoicePrefix + choice
}

func (f SettingField) validate(s *Settings) error {
	if f.check != nil {
		if err := f.check(s); err != nil {
			return err
		}
	}
	if f.applies != nil && !f.applies(s) {
		return nil
	}
	for _, m := range f.Fields {
		if err := m.validate(s); err != nil {
			return err
		}
	}
	return nil
}

// FindSettingField finds a declared field by name ("capacity",
// "adaptive.open_at"); a language of a LocalText ("title.ko") is its field.
func FindSettingField(name string) (SettingField, bool) {
	base, lang, perLang := strings.Cut(name, ".")
	for _, f := range SettingFields {
		if f.Name == name || perLang && f.PerLang && f.Name == base && lang != "" {
			return f, true
		}
		for _, m := range f.Fields {
			if m.Name == name {
				return m, true
			}
		}
	}
	return SettingField{}, false
}

func between(field string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return fieldErr(field, RuleBetween, "must be between %d and %d", lo, hi).with("min", lo, "max", hi)
	}
	return nil
}

// betweenOff: 0 (off) to hi.
func betweenOff(field string, v, hi int64) error {
	if v < 0 || v > hi {
		return fieldErr(field, RuleBetweenOff, "must be between 0 (off) and %d", hi).with("max", hi)
	}
	return nil
}

func atMost(field string, v string, n int) error {
	if len(v) > n {
		return fieldErr(field, RuleMaxChars, "must be at most %d characters", n).with("n", n)
	}
	return nil
}

// localTextDoc says in docs/api.md what a LocalText setting takes.
const localTextDoc = "a string (every language) or an object by language (`{\"en\": \"…\", \"ko\": \"…\"}`; a page without its language shows English, else any)"

func adaptiveOn(s *Settings) bool { return s.Activation == ActivationAdaptive && s.Adaptive != nil }

// SettingFields declare every room setting, in the form's order. Defaults
// are DefaultSettings (and Normalize for what is inside a field).
var SettingFields = []SettingField{
	{Name: "title", Section: SectionBasics, Kind: KindText, PerLang: true, Doc: "shown on the room's pages; " + localTextDoc + ", at most 200 characters each",
		check: func(s *Settings) error { return s.Title.check("title", 200) }},
	{Name: "message", Section: SectionBasics, Kind: KindLongText, PerLang: true, Doc: "shown on the waiting page; " + localTextDoc + ", at most 2000 characters each",
		check: func(s *Settings) error { return s.Message.check("message", 2000) }},
	{Name: "target_url", Section: SectionBasics, Kind: KindURL, Help: true,
		Doc: "where admitted users go: an absolute http(s) URL with a host (no user info), or a path starting with a single `/`; no `\\`, spaces or control characters anywhere (browsers read `/\\evil` as `//evil`, another site); percent-escapes such as `/%5C…` stay escaped and are allowed; at most 2048 characters",
		check: func(s *Settings) error {
			if err := validateTargetURL(s.TargetURL); err != nil {
				return err.at("target_url")
			}
			return nil
		}},
	{Name: "activation", Section: SectionBasics, Kind: KindSelect, Choices: []string{string(ActivationAlways), string(ActivationOff), string(ActivationAdaptive)},
		ChoicePrefix: "admin.activation.", Help: true,
		Doc: "`always` (the line is on), `off` (everyone is admitted at once) or `adaptive` (see `adaptive`)",
		check: func(s *Settings) error {
			if s.Activation != ActivationAlways && s.Activation != ActivationOff && s.Activation != ActivationAdaptive {
				return fieldErr("activation", RuleOneOf, "must be %q, %q or %q", ActivationAlways, ActivationOff, ActivationAdaptive).
					with("choices", choices(ActivationAlways, ActivationOff, ActivationAdaptive))
			}
			return nil
		}},
	{Name: "paused", Section: SectionBasics, Kind: KindBool, Doc: "admission stops; waiters keep their places"},
	{Name: "queueing_method", Section: SectionBasics, Kind: KindSelect,
		Choices:      []string{string(MethodFIFO), string(MethodRandom), string(MethodPassthrough), string(MethodReject)},
		ChoicePrefix: "admin.method.", Help: true,
		Doc: "`fifo` (first come, first admitted), `random` (each admission draws uniformly among those waiting: a lottery; no positions), `passthrough` (no line: everyone is admitted at once and counted, capacity is not a limit) or `reject` (nobody gets a place: a closed page, reason `maintenance`; those in line keep their places unseen)",
		check: func(s *Settings) error {
			switch s.QueueingMethod {
			case MethodFIFO, MethodRandom, MethodPassthrough, MethodReject:
				return nil
			}
			return fieldErr("queueing_method", RuleOneOf, "must be %q, %q, %q or %q", MethodFIFO, MethodRandom, MethodPassthrough, MethodReject).
				with("choices", choices(MethodFIFO, MethodRandom, MethodPassthrough, MethodReject))
		}},
	{Name: "sold_out", Section: SectionBasics, Kind: KindBool,
		Doc: "the sale has ended: newcomers and everyone in line see the sold out page, nobody is admitted or dropped; admitted visitors keep their tokens; undoing it puts the line back as it was"},
	{Name: "sold_out_message", Section: SectionBasics, Kind: KindLongText, PerLang: true, Doc: "shown on the sold out page; " + localTextDoc + ", at most 2000 characters each",
		check: func(s *Settings) error { return s.SoldOutMessage.check("sold_out_message", 2000) }},
	{Name: "max_waiting", Section: SectionBasics, Kind: KindNumber, Help: true,
		Doc: "the most people in line; newcomers beyond it get `full` (no place, try again later), those in line keep theirs; 0 is no limit",
		check: func(s *Settings) error {
			if s.MaxWaiting < 0 || s.MaxWaiting > 100_000_000 {
				return fieldErr("max_waiting", RuleBetweenNoLimit, "must be between 0 (no limit) and 100000000").with("max", 100_000_000)
			}
			return nil
		}},
	{Name: "ends_at", Section: SectionBasics, Kind: KindDateTime, Help: true,
		Doc: "RFC 3339; afterwards enter answers `closed` to newcomers (those in line keep their place)"},
	{Name: "opens_at", Section: SectionBasics, Kind: KindDateTime, Help: true,
		Doc: "RFC 3339; before it enter puts visitors in a pre-queue (`scheduled`), at it they get random places ahead of later arrivals",
		check: func(s *Settings) error {
			if s.OpensAt != nil && s.EndsAt != nil && !s.OpensAt.Before(*s.EndsAt) {
				return fieldErr("opens_at", RuleBeforeEndsAt, "must be before ends_at")
			}
			return nil
		}},

	{Name: "capacity", Section: SectionPace, Kind: KindNumber, Doc: "most users active in checkout at once",
		check: func(s *Settings) error { return between("capacity", s.Capacity, 1, 1_000_000) }},
	{Name: "batch_size", Section: SectionPace, Kind: KindNumber, Doc: "admissions per tick",
		check: func(s *Settings) error { return between("batch_size", s.BatchSize, 1, 10_000) }},
	{Name: "batch_interval_ms", Section: SectionPace, Kind: KindNumber, Doc: "tick length",
		check: func(s *Settings) error { return between("batch_interval_ms", s.BatchIntervalMS, 50, 60_000) }},
	{Name: "jitter_ms", Section: SectionPace, Kind: KindNumber, Help: true, Doc: "each admitted user's `orderable_at` = admission + uniform [0, jitter_ms)",
		check: func(s *Settings) error { return between("jitter_ms", s.JitterMS, 0, 600_000) }},
	{Name: "session_ttl_s", Section: SectionPace, Kind: KindNumber, Doc: "how long an admitted user holds the slot after `orderable_at`",
		check: func(s *Settings) error { return between("session_ttl_s", s.SessionTTLS, 1, 86_400) }},
	{Name: "abandon_after_s", Section: SectionPace, Kind: KindNumber, Help: true,
		Doc:   "a waiter with no sign of life this long loses the place; at least 20 and twice the longest tier interval",
		check: func(s *Settings) error { return between("abandon_after_s", s.AbandonAfterS, 1, 86_400) }},
	{Name: "arrival_window_s", Section: SectionPace, Kind: KindNumber, Help: true,
		Doc:   "an admitted visitor who has not arrived at checkout this long after `orderable_at` loses the slot to the next in line and the token stops verifying; arriving is the first pass through the gate, forward auth or the Go middleware, or a `POST /api/tokens/verify` of the token with the shop key or the admin token (an anonymous verify only checks); 0 is off (a checkout that only verifies offline through the JWKS must turn it off or call verify once)",
		check: func(s *Settings) error { return betweenOff("arrival_window_s", s.ArrivalWindowS, 86_400) }},
	{Name: "idle_after_s", Section: SectionPace, Kind: KindNumber, Help: true,
		Doc:   "an admitted visitor who arrived and then made no request through the gate or forward auth (nor a verify of the token) this long loses the slot; 0 is off",
		check: func(s *Settings) error { return betweenOff("idle_after_s", s.IdleAfterS, 86_400) }},
	{Name: "tiers", Section: SectionPace, Kind: KindTiers, Help: true,
		Doc:   "`[{\"max_position\": n or null, \"interval_ms\": n}]`: how often a waiter at or below `max_position` hears of its place; the last open-ended",
		check: func(s *Settings) error { return validateTiers(s.Tiers) }},

	{Name: "theme_color", Section: SectionLook, Kind: KindColour, Doc: "the waiting page's accent: `#rgb` or `#rrggbb`",
		check: func(s *Settings) error {
			if s.ThemeColor != "" && !ValidThemeColor(s.ThemeColor) {
				return fieldErr("theme_color", RuleColour, "must be #rgb or #rrggbb")
			}
			return nil
		}},
	{Name: "logo_url", Section: SectionLook, Kind: KindURL, Doc: "the waiting page's logo, as `target_url`",
		check: func(s *Settings) error { return optionalURL("logo_url", s.LogoURL) }},
	{Name: "shop_url", Section: SectionLook, Kind: KindURL, Doc: "a link back to the shop on the sold out and closed pages, as `target_url`; empty: no link",
		check: func(s *Settings) error { return optionalURL("shop_url", s.ShopURL) }},
	{Name: "product_id", Section: SectionLook, Kind: KindText, Doc: "what the accept page of degraded mode asks for (its id, at most 64 characters)",
		check: func(s *Settings) error { return atMost("product_id", s.ProductID, 64) }},
	{Name: "product_name", Section: SectionLook, Kind: KindText, PerLang: true, Doc: "what the accept page of degraded mode asks for (its name); " + localTextDoc + ", at most 200 characters each",
		check: func(s *Settings) error { return s.ProductName.check("product_name", 200) }},

	{Name: "user_secret", Section: SectionProtection, Kind: KindSecret, Doc: "HS256 secret of the shop's user tokens (16+ characters)",
		check: func(s *Settings) error {
			if len(s.UserSecret) > 0 && len(s.UserSecret) < 16 {
				return fieldErr("user_secret", RuleMinChars, "must be at least 16 characters when set").with("n", 16)
			}
			return nil
		}},
	{Name: "allowed_embedders", Section: SectionProtection, Kind: KindList, Doc: "origins allowed to frame `/embed/rooms/{room}` (at most 20)",
		check: func(s *Settings) error {
			if len(s.AllowedEmbedders) > 20 {
				return fieldErr("allowed_embedders", RuleMaxItems, "must list at most 20 origins").with("n", 20)
			}
			for i, o := range s.AllowedEmbedders {
				if err := validateOrigin(o); err != nil {
					return err.at(fmt.Sprintf("allowed_embedders[%d]", i))
				}
			}
			return nil
		}},
	{Name: "bot_protection", Section: SectionProtection, Kind: KindGroup, Doc: "what a place in line costs a client", Fields: []SettingField{
		{Name: "bot_protection.proof_of_work", Kind: KindSelect, Choices: []string{ProofOfWorkOn, ProofOfWorkOff}, ChoicePrefix: "admin.choice.proof_of_work.",
			Doc: "`on` or `off`: entering takes a proof-of-work solution",
			check: func(s *Settings) error {
				if p := s.BotProtection.ProofOfWork; p != ProofOfWorkOn && p != ProofOfWorkOff {
					return fieldErr("bot_protection.proof_of_work", RuleOneOf, `must be "on" or "off"`).with("choices", choices(ProofOfWorkOn, ProofOfWorkOff))
				}
				return nil
			}},
		{Name: "bot_protection.pow_cost", Kind: KindNumber, Doc: "expected scrypt runs of a place for a network's first places; each network's further places cost more (docs/api.md, \"Proof of work\")",
			check: func(s *Settings) error {
				return between("bot_protection.pow_cost", s.BotProtection.PowCost, 1, 10_000_000)
			}},
		{Name: "bot_protection.enters_per_ip_per_minute", Kind: KindNumber, Doc: "new places one client may take per minute (GCRA, burst = the limit); 0 is no limit",
			check: func(s *Settings) error {
				if v := s.BotProtection.EntersPerIPPerMinute; v < 0 || v > 1_000_000 {
					return fieldErr("bot_protection.enters_per_ip_per_minute", RuleBetweenNoLimit, "must be between 0 (no limit) and 1000000").with("max", 1_000_000)
				}
				return nil
			}},
		{Name: "bot_protection.places_per_ip", Kind: KindNumber, Doc: "live places (waiting or admitted) one client may hold; 0 is no limit",
			check: func(s *Settings) error {
				if v := s.BotProtection.PlacesPerIP; v < 0 || v > 1_000_000 {
					return fieldErr("bot_protection.places_per_ip", RuleBetweenNoLimit, "must be between 0 (no limit) and 1000000").with("max", 1_000_000)
				}
				return nil
			}},
		{Name: "bot_protection.unarrived_per_network", Kind: KindNumber,
			Doc: "admitted slots one client network may hold whose visitors have not yet arrived at checkout (`arrival_window_s`); the network's further places keep their turn and are admitted as soon as one of those arrives or lapses; applies while `arrival_window_s` is on; 0 is no limit",
			check: func(s *Settings) error {
				if v := s.BotProtection.UnarrivedPerNetwork; v < 0 || v > 1_000_000 {
					return fieldErr("bot_protection.unarrived_per_network", RuleBetweenNoLimit, "must be between 0 (no limit) and 1000000").with("max", 1_000_000)
				}
				return nil
			}},
	}},
	{Name: "checkout_after_intent", Section: SectionProtection, Kind: KindBool,
		Doc: "a visitor whose degraded-mode intent was not rejected may also take a place in the line and check out (off: entering answers state `ordered`); their entry token names the intent (`intent` claim) either way"},
	{Name: "max_quantity", Section: SectionProtection, Kind: KindNumber, Doc: "the most `quantity` one intent may ask for in degraded mode; 0 is no cap",
		check: func(s *Settings) error {
			if s.MaxQuantity < 0 || s.MaxQuantity > 1_000_000 {
				return fieldErr("max_quantity", RuleBetweenNoCap, "must be between 0 (no cap) and 1000000").with("max", 1_000_000)
			}
			return nil
		}},

	{Name: "adaptive", Section: SectionAdaptive, Kind: KindGroup, Help: true, applies: adaptiveOn,
		Doc: "with `activation: \"adaptive\"`: the line opens when a reading reaches `open_at` and closes after `windows_to_close` windows below `close_at`; while closed, entries are admitted at once (capacity still counted, tokens still issued), but never ahead of people still waiting; when the signal cannot be read the room keeps its state",
		check: func(s *Settings) error {
			if s.Activation == ActivationAdaptive && s.Adaptive == nil {
				return fieldErr("adaptive", RuleAdaptiveNeeded, "is required with activation \"adaptive\"")
			}
			return nil
		},
		Fields: []SettingField{
			{Name: "adaptive.signal", Kind: KindSelect, Choices: []string{"", SignalPrometheus, SignalGateInflight, SignalGateLatency}, ChoicePrefix: "admin.choice.signal.",
				Doc: "`prometheus` (a PromQL query), `gate_inflight` (the gate's in-flight requests ÷ capacity) or `gate_latency` (its p95 ÷ `latency_target_ms`)",
				check: func(s *Settings) error {
					if a := s.Adaptive; a.Signal != SignalPrometheus && a.Signal != SignalGateInflight && a.Signal != SignalGateLatency {
						return fieldErr("adaptive.signal", RuleOneOf, "must be prometheus, gate_inflight or gate_latency").
							with("choices", choices(SignalPrometheus, SignalGateInflight, SignalGateLatency))
					}
					return nil
				}},
			{Name: "adaptive.prometheus_url", Kind: KindURL, Doc: "the Prometheus HTTP API base URL (signal `prometheus`)",
				check: func(s *Settings) error {
					if a := s.Adaptive; a.Signal == SignalPrometheus && validateURL(a.PrometheusURL, false) != nil {
						return fieldErr("adaptive.prometheus_url", RulePrometheusURL, "must be the Prometheus HTTP API base URL")
					}
					return nil
				}},
			{Name: "adaptive.query", Kind: KindText, Doc: "the PromQL instant query (signal `prometheus`)",
				check: func(s *Settings) error {
					if a := s.Adaptive; a.Signal == SignalPrometheus && a.Query == "" {
						return fieldErr("adaptive.query", RuleNeededBySignal, "is required with signal prometheus").with("signal", SignalPrometheus)
					}
					return nil
				}},
			{Name: "adaptive.latency_target_ms", Kind: KindNumber, Doc: "the latency that reads as 1 (signal `gate_latency`)",
				check: func(s *Settings) error {
					if a := s.Adaptive; a.Signal == SignalGateLatency && a.LatencyTargetMS <= 0 {
						return fieldErr("adaptive.latency_target_ms", RulePositiveSignal, "must be positive with signal gate_latency").with("signal", SignalGateLatency)
					}
					return nil
				}},
			{Name: "adaptive.open_at", Kind: KindDecimal, Doc: "the reading that opens the line",
				check: func(s *Settings) error {
					if s.Adaptive.OpenAt <= 0 {
						return fieldErr("adaptive.open_at", RulePositive, "must be positive")
					}
					return nil
				}},
			{Name: "adaptive.close_at", Kind: KindDecimal, Doc: "the reading below which windows count towards closing (below `open_at`)",
				check: func(s *Settings) error {
					if a := s.Adaptive; a.CloseAt < 0 || a.CloseAt >= a.OpenAt {
						return fieldErr("adaptive.close_at", RuleBelowOpenAt, "must be at least 0 and below open_at")
					}
					return nil
				}},
			{Name: "adaptive.window_s", Kind: KindNumber, Doc: "the length of one window",
				check: func(s *Settings) error { return between("adaptive.window_s", s.Adaptive.WindowS, 1, 3600) }},
			{Name: "adaptive.windows_to_close", Kind: KindNumber, Doc: "windows below `close_at` that close the line",
				check: func(s *Settings) error {
					return between("adaptive.windows_to_close", s.Adaptive.WindowsToClose, 1, 100)
				}},
		}},
}

var (
	themeColorPattern = regexp.MustCompile(`^(?:` + ThemeColorPattern + `)$`)
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

// ParseSettings decodes JSON over the defaults, fills what is left empty
// (Normalize) and checks the result (Validate). Unknown fields are refused so
// that a typo does not pass silently.
func ParseSettings(data []byte) (Settings, error) {
	s := DefaultSettings()
	if err := DecodeStrict(data, &s); err != nil {
		return Settings{}, err
	}
	s.Normalize()
	if err := s.Validate(); err != nil {
		return Settings{}, err
	}
	return s, nil
}

// Normalize fills the defaults of what JSON can leave empty inside a field
// (no tiers, an adaptive window or a proof-of-work switch left out). It
// trims nothing: a URL with a space is refused, not repaired, as before.
func (s *Settings) Normalize() {
	if len(s.Tiers) == 0 {
		s.Tiers = DefaultTiers()
	}
	if a := s.Adaptive; a != nil {
		if a.WindowS == 0 {
			a.WindowS = 60
		}
		if a.WindowsToClose == 0 {
			a.WindowsToClose = 3
		}
	}
	if s.QueueingMethod == "" {
		s.QueueingMethod = MethodFIFO
	}
	if s.BotProtection.ProofOfWork == "" {
		s.BotProtection.ProofOfWork = ProofOfWorkOn
	}
	if s.BotProtection.PowCost == 0 {
		s.BotProtection.PowCost = DefaultPowCost
	}
}

// Validate checks every declared field in SettingFields order, then the rules
// across fields, and returns a *FieldError for the first bad one. It changes
// nothing: call Normalize first for the defaults.
func (s *Settings) Validate() error {
	for _, f := range SettingFields {
		if err := f.validate(s); err != nil {
			return err
		}
	}
	// A waiter who polls at its tier interval, or holds a push connection
	// (refreshed at least every MinAbandonAfterS/2), must never look abandoned.
	longest := int64(0)
	for _, t := range s.Tiers {
		longest = max(longest, t.IntervalMS)
	}
	if s.AbandonAfterS < MinAbandonAfterS || s.AbandonAfterS*1000 < 2*longest {
		return fieldErr("abandon_after_s", RuleAbandonAfter, "must be at least %d and at least twice the longest tier interval (%d ms)", MinAbandonAfterS, longest).
			with("min", MinAbandonAfterS, "longest", longest)
	}
	return nil
}

// ThemeColorPattern is a theme colour, #rgb or #rrggbb, unanchored as an
// HTML pattern attribute takes it.
const ThemeColorPattern = `#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})`

// ValidThemeColor reports whether c is #rgb or #rrggbb: the only colours a
// room may set, since pages put it into a <style> element as it is.
func ValidThemeColor(c string) bool { return themeColorPattern.MatchString(c) }

func validateTiers(tiers []Tier) error {
	if len(tiers) == 0 {
		return fieldErr("tiers", RuleTiersEmpty, "must list at least one tier")
	}
	var last int64
	for i, t := range tiers {
		field := fmt.Sprintf("tiers[%d]", i)
		if t.IntervalMS < 100 || t.IntervalMS > 600_000 {
			return fieldErr(field+".interval_ms", RuleBetween, "must be between 100 and 600000").with("min", 100, "max", 600_000)
		}
		if t.MaxPosition == nil {
			if i != len(tiers)-1 {
				return fieldErr(field+".max_position", RuleTierOpenLast, "only the last tier may be open-ended (null)")
			}
			continue
		}
		if *t.MaxPosition <= last {
			return fieldErr(field+".max_position", RuleTierAscending, "must be greater than the tier before")
		}
		last = *t.MaxPosition
	}
	if tiers[len(tiers)-1].MaxPosition != nil {
		return fieldErr(fmt.Sprintf("tiers[%d].max_position", len(tiers)-1), RuleTierLastOpen, "the last tier must be open-ended (null)")
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
// optionalURL checks an optional page URL (logo_url, shop_url) as
// target_url is checked; empty is none.
func optionalURL(field, raw string) error {
	if raw == "" {
		return nil
	}
	if err := validateTargetURL(raw); err != nil {
		return err.at(field)
	}
	return nil
}

func validateTargetURL(raw string) *FieldError {
	return validateURL(raw, true)
}

// validateURL is validateTargetURL for browsers (paths allowed, user info
// refused), or for a server-side base URL such as prometheus_url (absolute
// only; user info is its basic auth).
func validateURL(raw string, browser bool) *FieldError {
	switch {
	case raw == "":
		return fieldErr("", RuleRequired, "is required")
	case len(raw) > maxURLLen:
		return fieldErr("", RuleMaxChars, "must be at most %d characters", maxURLLen).with("n", maxURLLen)
	case strings.ContainsFunc(raw, func(r rune) bool {
		return r <= ' ' || r == 0x7f || r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r)
	}):
		return fieldErr("", RuleURLChars, "must not contain spaces, control characters or backslashes")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fieldErr("", RuleURL, "is not a URL")
	}
	if u.Scheme != "" {
		if u.Scheme != "http" && u.Scheme != "https" {
			return fieldErr("", RuleURLScheme, "must be http or https")
		}
		if u.Host == "" || u.Opaque != "" || strings.HasPrefix(u.Host, ":") {
			return fieldErr("", RuleURLHost, "must have a host")
		}
		if browser && u.User != nil {
			return fieldErr("", RuleURLUserInfo, "must not carry user info")
		}
		return nil
	}
	if browser && raw[0] == '/' && (len(raw) == 1 || raw[1] != '/') {
		return nil
	}
	if !browser {
		return fieldErr("", RuleURLAbsolute, "must be an absolute http(s) URL")
	}
	return fieldErr("", RuleURLOrPath, "must be an absolute http(s) URL or a path starting with a single /")
}

// validateOrigin accepts an origin exactly as a browser serializes it
// (lowercase, no default port, no path), because it is compared with
// MessageEvent.origin and put into Content-Security-Policy as it is.
func validateOrigin(raw string) *FieldError {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fieldErr("", RuleOrigin, "must be an origin: http(s)://host[:port]")
	}
	if u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.ContainsAny(raw, "?#*") {
		return fieldErr("", RuleOriginBare, "must be an origin, without path, query or wildcard: http(s)://host[:port]")
	}
	canon := u.Scheme + "://" + strings.ToLower(u.Hostname())
	if strings.Contains(u.Hostname(), ":") {
		canon = u.Scheme + "://[" + strings.ToLower(u.Hostname()) + "]"
	}
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80" || u.Scheme == "https" && p == "443") {
		canon += ":" + p
	}
	if canon != raw {
		return fieldErr("", RuleOriginAsSent, "must be written as the browser writes the origin: %s", canon).with("origin", canon)
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

// Scheduled reports whether the room's scheduled opening is still ahead at now.
func (s *Settings) Scheduled(now time.Time) bool {
	return s.OpensAt != nil && now.Before(*s.OpensAt)
}

// DecodeStrict decodes one JSON object into v, refusing unknown fields, and
// returns a *FieldError naming what is wrong.
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if f := badDateTime(data, err); f != nil {
			return f
		}
		return jsonFieldError(err)
	}
	if dec.More() {
		return fieldErr("body", RuleOneObject, "must hold one JSON object")
	}
	return nil
}
