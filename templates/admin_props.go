package templates

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/waitroom/waitroom/internal/operator/history"
	"github.com/waitroom/waitroom/queue"
)

// The admin dashboard's views. Live views are also the JSON pushed to open
// dashboards (web/admin_types.ts mirrors them), so they carry no words: one
// payload is shared by viewers in every language.

// AdminHealth is the deployment's state as this server sees it.
type AdminHealth struct {
	RedisUp bool `json:"redis_up"`
	// Degraded is nil when this server has no degraded mode.
	Degraded *bool  `json:"degraded"`
	Forced   *bool  `json:"forced"` // the drill: nil automatic
	Reason   string `json:"reason"` // why, from the availability flag (English)
	// ReasonKey names the catalogue's words for Reason, which pages show.
	ReasonKey string       `json:"reason_key"`
	Outbox    *AdminOutbox `json:"outbox"` // nil: no outbox on this server
}

// AdminOutbox are the degraded path's intents by status, and the results
// that came back in the last minute (nil until there are two samples).
type AdminOutbox struct {
	Pending           int64  `json:"pending"`
	Published         int64  `json:"published"`
	Processed         int64  `json:"processed"`
	Rejected          int64  `json:"rejected"`
	MinuteProcessed   *int64 `json:"minute_processed"`
	MinuteRejected    *int64 `json:"minute_rejected"`
	MinuteSpanSeconds int64  `json:"minute_span_s"` // how much history the minute figures cover
}

// AdminPoint is one sample of a room for the charts: Unix ms and the values.
// A nil rate is unknown (the first sample, or counters that were reset).
type AdminPoint struct {
	T int64 `json:"t"`
	// Waiting counts everyone waiting, the pre-queue of a scheduled
	// opening (PreQueue) included.
	Waiting       int64    `json:"waiting"`
	PreQueue      int64    `json:"pre_queue"`
	Active        int64    `json:"active"`
	Capacity      int64    `json:"capacity"`
	AdmittedPerS  *float64 `json:"admitted_per_s"`
	EntriesPerS   *float64 `json:"entries_per_s"`
	AbandonedPerS *float64 `json:"abandoned_per_s"`
	TailETAS      *float64 `json:"tail_eta_s"`
	// Slots freed as no-shows (arrival_window_s) and as idle (idle_after_s).
	NoShowsPerMin *float64 `json:"no_shows_per_min"`
	IdlePerMin    *float64 `json:"idle_per_min"`
}

// AdminRoomView is one room, live.
type AdminRoomView struct {
	Room  string `json:"room"`
	Title string `json:"title"`
	// Titles are the title by language when the room has one per language.
	Titles          map[string]string `json:"titles,omitempty"`
	Paused          bool              `json:"paused"`
	Closed          bool              `json:"closed"`
	SoldOut         bool              `json:"sold_out"`
	Scheduled       bool              `json:"scheduled"` // before opens_at: the pre-queue fills
	Capacity        int64             `json:"capacity"`
	BatchSize       int64             `json:"batch_size"`
	BatchIntervalMS int64             `json:"batch_interval_ms"`
	ConfiguredRate  float64           `json:"configured_rate"`
	Activation      string            `json:"activation"` // always, off, adaptive
	// LineOn is whether the line is on; nil when unknown (adaptive without a reader).
	LineOn *bool `json:"line_on"`
	// LineReasonKey names a catalogue string, filled from LineReasonArgs;
	// LineReason is the adaptive controller's English, for a state that
	// names no cause. One of them is set.
	LineReasonKey  string            `json:"line_reason_key"`
	LineReasonArgs map[string]string `json:"line_reason_args,omitempty"`
	LineReason     string            `json:"line_reason"`
	// LineSignalError is why the adaptive signal could not be read (its
	// error, not words: shown as code); "" when it was.
	LineSignalError string   `json:"line_signal_error,omitempty"`
	WaitP50S        *float64 `json:"wait_p50_s"`
	WaitP95S        *float64 `json:"wait_p95_s"`
	// NoCheckout: target_url is still the default page saying the room
	// has no checkout.
	NoCheckout bool        `json:"no_checkout"`
	Point      AdminPoint  `json:"point"` // the latest sample
	Health     AdminHealth `json:"health"`
}

// AdminRoomSummary is a row of the rooms list.
type AdminRoomSummary struct {
	Room         string            `json:"room"`
	Title        string            `json:"title"`
	Titles       map[string]string `json:"titles,omitempty"` // as AdminRoomView's
	Paused       bool              `json:"paused"`
	Closed       bool              `json:"closed"`
	SoldOut      bool              `json:"sold_out"`
	Scheduled    bool              `json:"scheduled"`
	Activation   string            `json:"activation"`
	Waiting      int64             `json:"waiting"`
	Active       int64             `json:"active"`
	Capacity     int64             `json:"capacity"`
	AdmittedPerS *float64          `json:"admitted_per_s"`
	PreQueue     int64             `json:"pre_queue"` // of Waiting
}

// AdminOverview is the rooms list, live.
type AdminOverview struct {
	Rooms  []AdminRoomSummary `json:"rooms"`
	Stale  bool               `json:"stale"` // Redis did not answer: the rooms as last seen
	Health AdminHealth        `json:"health"`
}

// AdminPage is what every signed-in admin page shares.
type AdminPage struct {
	Lang Lang
	CSRF string // the session's CSRF token; empty on the sign-in page
	Path string // this page, for the language links
	// Health shows in the header; nil on pages without it.
	Health *AdminHealth
}

// AdminLoginProps is the sign-in page.
type AdminLoginProps struct {
	Lang  Lang
	CSRF  string // the sign-in form's own token
	Next  string
	Error string // a catalogue key, or empty
}

// AdminRoomsProps is the rooms list.
type AdminRoomsProps struct {
	AdminPage
	Overview AdminOverview
}

// AdminRoomProps is one room's live page.
type AdminRoomProps struct {
	AdminPage
	View   AdminRoomView
	Series []AdminPoint
	// DegradeControl shows the drill buttons (this server has degraded mode).
	DegradeControl bool
	// ControlErrors are inline messages of a control form posted without
	// script, by field; Saved says a control was applied.
	ControlErrors map[string]string
	Saved         bool
	// Opening is the scheduled opening; nil when the room has none.
	Opening *AdminOpening
	// Range, when set, is the span of the sale's history the charts show
	// instead of the live 15 minutes; History says there is a history.
	Range   *AdminRange
	History bool
}

// AdminRange is a span of the sale's history; Sale: the whole of it.
type AdminRange struct {
	From, To time.Time
	Sale     bool
}

// AdminReportProps is the printable sale report.
type AdminReportProps struct {
	AdminPage
	Room, Title string
	Summary     history.Summary
	Keep        time.Duration // how long the history is kept
}

// AdminRoomFormProps is the create and edit form. Values are the inputs as
// typed (or as stored), Errors the checks' messages by field.
type AdminRoomFormProps struct {
	AdminPage
	Create    bool
	Room      string
	Values    map[string]string
	Errors    map[string]string
	FormError string
	HasSecret bool // the room has a user secret: empty keeps it
	// Defaults are the values fields left empty take, shown as placeholders.
	Defaults map[string]string
	// Tiers are the tier rows, as typed or stored.
	Tiers []AdminTierRow
}

// AdminTierRow is one tier of the form: an empty MaxPosition is open-ended.
type AdminTierRow struct {
	MaxPosition, IntervalMS string
}

// AdminDeleteProps is the confirmation before a room is deleted.
type AdminDeleteProps struct {
	AdminPage
	Room, Title string
}

// AdminErrorProps is an admin error page.
type AdminErrorProps struct {
	AdminPage
	Status  int
	Message string
}

// AdminRoomPath is a room's dashboard page; suffix ("/edit", ...) is appended.
func AdminRoomPath(room, suffix string) string {
	return "/admin/rooms/" + url.PathEscape(room) + suffix
}

// adminActivations are the activation modes the forms offer, as declared.
var adminActivations = func() []string {
	f, _ := queue.FindSettingField("activation")
	return f.Choices
}()

// adminSectionFields are the declared settings of one form section.
func adminSectionFields(section string) []queue.SettingField {
	var out []queue.SettingField
	for _, f := range queue.SettingFields {
		if f.Section == section {
			out = append(out, f)
		}
	}
	return out
}

// adminFieldLabel is a setting's label.
func adminFieldLabel(lang Lang, name string) string { return T(lang, "admin.field."+name) }

// AdminLangInput is the form input of a LocalText setting in lang: the
// setting's own name for English (which is also every language left
// empty), "name.lang" for the others.
func AdminLangInput(name string, lang Lang) string {
	if lang == English {
		return name
	}
	return name + "." + string(lang)
}

// adminLangPlaceholder says what an empty input of another language shows.
func adminLangPlaceholder(ui, l Lang) string {
	if l == English {
		return ""
	}
	return T(ui, "admin.text_lang.same")
}

// adminInputID is an input's id: "field-adaptive.open_at" would read as a
// class in CSS selectors, so dots become dashes.
func adminInputID(name string) string { return "field-" + strings.ReplaceAll(name, ".", "-") }

// adminFieldHelp is a field's help text, or "".
func adminFieldHelp(lang Lang, f queue.SettingField) string {
	if k := f.HelpKey(); k != "" {
		return T(lang, k)
	}
	return ""
}

// adminDescribedBy points an input at its help and its error.
func adminDescribedBy(f queue.SettingField) string {
	ids := "error-for-" + strings.ReplaceAll(f.Name, ".", "-")
	if f.Help {
		ids = "hint-" + strings.ReplaceAll(f.Name, ".", "-") + " " + ids
	}
	return ids
}

func withPlaceholders(s string, kv ...string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		s = strings.ReplaceAll(s, "{"+kv[i]+"}", kv[i+1])
	}
	return s
}

// AdminFormatRate shows a per-second rate with one decimal ("12.5/s"); a
// rate under one a second as one every so often ("1 per 30 s", "1 per 4
// min"), so a slow room does not read as stopped; or n/a.
// web/admin_format.ts formatRate is the same.
func AdminFormatRate(lang Lang, v *float64) string {
	if v == nil {
		return T(lang, "admin.na")
	}
	if *v > 0 && *v < 0.95 {
		every := int64(1 / *v + 0.5)
		if every >= 120 {
			return withPlaceholders(T(lang, "admin.unit.one_per_min"), "n", FormatNumber(lang, (every+30)/60))
		}
		return withPlaceholders(T(lang, "admin.unit.one_per_s"), "n", FormatNumber(lang, every))
	}
	return withPlaceholders(T(lang, "admin.unit.per_s"), "n", formatDecimal(lang, *v))
}

// AdminFormatPerMin is a rate per minute, as web/admin_format.ts formatPerMin.
func AdminFormatPerMin(lang Lang, v *float64) string {
	if v == nil {
		return T(lang, "admin.na")
	}
	return withPlaceholders(T(lang, "admin.unit.per_min"), "n", formatDecimal(lang, *v))
}

// AdminFormatSeconds shows a duration in seconds: under two minutes in
// seconds, under two hours in minutes, else in hours, rounded; or n/a.
// web/admin_format.ts formatSeconds is the same.
func AdminFormatSeconds(lang Lang, v *float64) string {
	if v == nil {
		return T(lang, "admin.na")
	}
	s := *v
	switch {
	case s < 120:
		return withPlaceholders(T(lang, "admin.unit.s"), "n", FormatNumber(lang, int64(s+0.5)))
	case s < 7200:
		return withPlaceholders(T(lang, "admin.unit.min"), "n", FormatNumber(lang, int64(s/60+0.5)))
	}
	return withPlaceholders(T(lang, "admin.unit.h"), "n", FormatNumber(lang, int64(s/3600+0.5)))
}

// formatDecimal shows one decimal place, grouped as lang does.
func formatDecimal(lang Lang, v float64) string {
	tenths := int64(v*10 + 0.5)
	if v < 0 {
		tenths = int64(v*10 - 0.5)
	}
	whole, frac := tenths/10, tenths%10
	if frac < 0 {
		frac = -frac
	}
	return FormatNumber(lang, whole) + "." + strconv.FormatInt(frac, 10)
}

// AdminStrings are the admin.* strings, for the dashboard's script.
func AdminStrings(lang Lang) map[string]string {
	out := map[string]string{}
	for k := range catalogue[English] {
		if strings.HasPrefix(k, "admin.") {
			out[k] = T(lang, k)
		}
	}
	return out
}

func adminLineText(lang Lang, v AdminRoomView) string {
	switch {
	case v.LineOn == nil:
		return T(lang, "admin.na")
	case *v.LineOn:
		return T(lang, "admin.line.on")
	}
	return T(lang, "admin.line.off")
}

func adminLineReason(lang Lang, v AdminRoomView) string {
	if v.LineReasonKey != "" {
		s := T(lang, v.LineReasonKey)
		for k, a := range v.LineReasonArgs {
			s = strings.ReplaceAll(s, "{"+k+"}", a)
		}
		return s
	}
	return v.LineReason
}

func adminRedisText(lang Lang, h AdminHealth) string {
	if h.RedisUp {
		return T(lang, "admin.redis.up")
	}
	return T(lang, "admin.redis.down")
}

// AdminTitle is a room's title in lang: its own in lang when it has titles
// by language, else the one title (web/admin_view.ts picks the same way).
func AdminTitle(lang Lang, title string, titles map[string]string) string {
	if s, ok := titles[string(lang)]; ok {
		return s
	}
	return title
}

// adminReason is why degraded mode is on or off, in lang.
func adminReason(lang Lang, h AdminHealth) string {
	if h.ReasonKey != "" {
		return T(lang, h.ReasonKey)
	}
	return h.Reason
}

func adminDegradedText(lang Lang, h AdminHealth) string {
	if h.Degraded == nil {
		return T(lang, "admin.na")
	}
	s := T(lang, "admin.degraded.off")
	if *h.Degraded {
		s = T(lang, "admin.degraded.on")
	}
	if h.Forced != nil {
		s += " " + T(lang, "admin.degraded.forced")
	}
	return s
}

func adminResults(lang Lang, o *AdminOutbox) string {
	if o == nil || o.MinuteProcessed == nil || o.MinuteRejected == nil {
		return T(lang, "admin.na")
	}
	return withPlaceholders(T(lang, "admin.results"),
		"processed", FormatNumber(lang, *o.MinuteProcessed), "rejected", FormatNumber(lang, *o.MinuteRejected))
}

func adminActive(lang Lang, active, capacity int64) string {
	return FormatNumber(lang, active) + " / " + FormatNumber(lang, capacity)
}

// adminState is the room's state word, true to what admission does: in
// degraded mode this server's admission loop admits nobody, and at
// capacity nobody is admitted until a slot frees, so neither says
// "Admitting".
func adminState(lang Lang, paused, closed, soldOut, scheduled bool, h AdminHealth, active, capacity int64) string {
	switch {
	case closed:
		return T(lang, "admin.state.closed")
	case soldOut:
		return T(lang, "admin.state.sold_out")
	case scheduled:
		return T(lang, "admin.state.scheduled")
	case paused:
		return T(lang, "admin.state.paused")
	case h.Degraded != nil && *h.Degraded:
		return T(lang, "admin.state.held")
	case capacity > 0 && active >= capacity:
		return T(lang, "admin.state.full")
	}
	return T(lang, "admin.state.running")
}

// adminLangURL is the same page in another language.
func adminLangURL(path string, l Lang) string {
	if path == "" {
		path = "/admin"
	}
	return path + "?lang=" + string(l)
}

func adminLangName(l Lang) string {
	if l == Korean {
		return "한국어"
	}
	return "English"
}

func adminDegradeMode(h *AdminHealth) string {
	if h != nil && h.Forced != nil && *h.Forced {
		return "on"
	}
	return "auto"
}

func adminPageTitle(lang Lang, heading string) string {
	return heading + " · " + T(lang, "admin.title")
}

func boolAttr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func intAttr(n int64) string { return strconv.FormatInt(n, 10) }

func floatAttr(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 3, 64)
}

func adminFormHeading(p AdminRoomFormProps) string {
	if p.Create {
		return T(p.Lang, "admin.form.new_heading")
	}
	return withPlaceholders(T(p.Lang, "admin.form.edit_heading"), "room", p.Room)
}

func adminFormAction(p AdminRoomFormProps) string {
	if p.Create {
		return "/admin/create"
	}
	return AdminRoomPath(p.Room, "/edit")
}

func adminFormCancel(p AdminRoomFormProps) string {
	if p.Create {
		return "/admin"
	}
	return AdminRoomPath(p.Room, "")
}
