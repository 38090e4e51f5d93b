package templates

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/waitroom/waitroom/internal/vocab"
)

// Lang is a language the pages are written in.
type Lang string

// The languages the catalogue has (internal/vocab names them, so a room's
// texts per language use the same tags).
const (
	English Lang = vocab.LangEnglish
	Korean  Lang = vocab.LangKorean
)

// Langs lists the supported languages, the default first.
var Langs = []Lang{English, Korean}

// catalogue is the one place page and client strings live. Keys ending in
// .zero/.one/.other are plural forms (see Tn); {n} is the number.
var catalogue = map[Lang]map[string]string{
	English: {
		"page.title":               "Waiting room",
		"waiting.heading":          "You're in line",
		"waiting.intro":            "Keep this page open. We'll take you in when it's your turn.",
		"waiting.position":         "Your place in line",
		"waiting.ahead.zero":       "No one is ahead of you",
		"waiting.ahead.one":        "1 person ahead of you",
		"waiting.ahead.other":      "{n} people ahead of you",
		"waiting.total.one":        "1 person",
		"waiting.total.other":      "{n} people",
		"waiting.eta":              "Estimated wait",
		"waiting.in_line":          "Everyone in line",
		"waiting.progress":         "Progress to the front of the line",
		"waiting.last_update":      "Last updated",
		"waiting.paused":           "Admission is paused for the moment. You keep your place in line.",
		"eta.unknown":              "Working it out…",
		"eta.paused":               "None while admission is paused",
		"eta.under_minute":         "less than a minute",
		"eta.minutes.one":          "about 1 minute",
		"eta.minutes.other":        "about {n} minutes",
		"eta.hours.one":            "about 1 hour",
		"eta.hours.other":          "about {n} hours",
		"eta.range_minutes":        "about {lo}–{hi} minutes",
		"eta.range_hours":          "about {lo}–{hi} hours",
		"conn.refresh.one":         "This page refreshes every second",
		"conn.refresh.other":       "This page refreshes every {n} seconds",
		"conn.connecting":          "Connecting…",
		"conn.ws":                  "Live updates",
		"conn.sse":                 "Live updates (event stream)",
		"conn.poll":                "Checking for updates regularly",
		"conn.reconnecting":        "Connection lost, reconnecting…",
		"scheduled.heading":        "The sale opens soon",
		"scheduled.body":           "Your place in line will be drawn at {time}. Everyone who arrives before then gets a random place, so there is no need to hurry or refresh.",
		"scheduled.countdown":      "Opens in {t}",
		"scheduled.timer_label":    "Time until the opening",
		"scheduled.drawing":        "Drawing places…",
		"scheduled.position":       "Your place",
		"scheduled.unknown":        "drawn at the opening",
		"scheduled.keep_open":      "Keep this page open: it shows your place as soon as it is drawn.",
		"admitted.heading":         "It's your turn",
		"admitted.countdown.one":   "Taking you to the shop in 1 second…",
		"admitted.countdown.other": "Taking you to the shop in {n} seconds…",
		"admitted.now":             "Taking you to the shop now…",
		"admitted.go":              "Continue to the shop",
		"admitted.hint":            "If nothing happens, use the button.",
		"admitted.held":            "Your turn is held for {d} once it starts.",
		"admitted.arrive":          "Reach the shop within {d}, or it passes to the next person in line.",
		"duration.seconds.one":     "1 second",
		"duration.seconds.other":   "{n} seconds",
		"duration.minutes.one":     "1 minute",
		"duration.minutes.other":   "{n} minutes",
		"duration.hours.one":       "1 hour",
		"duration.hours.other":     "{n} hours",
		"expired.heading":          "Your place in line has expired",
		"expired.body":             "This place is no longer held, for example because the page was closed for a while. You can join the line again.",
		"expired.again":            "Enter again",
		"expired.no_show.heading":  "Your turn has lapsed",
		"expired.no_show.body":     "You did not reach checkout in time after your turn began, so your slot went to the next person in line. You can join the line again.",
		"expired.idle.heading":     "Your turn has lapsed",
		"expired.idle.body":        "There was no activity at checkout for a while, so your slot went to the next person in line. You can join the line again.",
		"closed.heading":           "This waiting room is closed",
		"closed.body":              "The sale has ended or the room is no longer open.",
		"ended.thanks":             "Thank you for waiting.",
		"ended.back":               "Back to the shop",
		"bypassed.heading":         "No need to wait",
		"bypassed.go":              "Continue",
		"embed.joining":            "Joining the line…",
		"checking.heading":         "Checking your browser",
		"checking.body":            "This takes a second or two and keeps scripts from taking places in line. Please wait…",
		"checking.failed":          "The check did not finish. Please try again.",
		"checking.longer":          "This check takes longer than usual, about {factor} times: your network already holds {held} places in this line, and each further place costs more work. Please wait…",
		"checking.again":           "Try again",
		"checking.nojs":            "This waiting room checks your browser before it gives you a place in line, and that needs JavaScript. Please turn JavaScript on and reload this page.",
		"embed.forbidden":          "This waiting room may not be shown on this site.",
		"notfound.heading":         "Waiting room not found",
		"notfound.body":            "There is no waiting room called “{room}”. Please check the link you followed.",
		"nocheckout.heading":       "This sale has no checkout yet",
		"nocheckout.body":          "Your turn came in the waiting room “{room}”, but this room has no checkout address yet, so there is nowhere to send you. Nothing was ordered or charged.",
		"nocheckout.body.anon":     "Your turn came in the waiting room, but this room has no checkout address yet, so there is nowhere to send you. Nothing was ordered or charged.",
		"nocheckout.operator":      "If you run this sale: set the room's target_url in the dashboard (/admin) or with the admin API (PATCH /admin/api/rooms/{room}).",
		"error.heading":            "Something went wrong",
		"error.body":               "Please try again in a moment.",
		"error.busy.heading":       "The waiting room is busy",
		"error.busy.body":          "We're retrying automatically. Please keep this page open.",
		"error.status":             "Error {n}",
		"accept.heading":           "Place your order request",
		"accept.intro":             "The waiting room is under heavy load, so we take your request now and process it in order as checkout frees up. You keep your turn.",
		"accept.product":           "Product",
		"accept.quantity":          "Quantity",
		"accept.submit":            "Send my request",
		"accept.status":            "Your request",
		"accept.status.accepted":   "Received and saved. Waiting to be sent to checkout…",
		"accept.status.published":  "Sent to checkout. Waiting for the result…",
		"accept.status.processed":  "Your order is placed.",
		"accept.status.rejected":   "Your order could not be placed.",
		"accept.reason.sold_out":   "Sorry, the product sold out.",
		"accept.line_back":         "The waiting room is working normally again.",
		"accept.ordered":           "You already placed an order request here while the waiting room was down. That is your order, so you do not need to wait in line again.",
		"accept.retry":             "We could not save your request just now. Try again in a moment: we will send it again for you.",
		"accept.line_back.go":      "Go to the waiting room",
		// The waiting page's live state, leaving and time of entry (issue 14).
		"waiting.since":            "In line since",
		"reconnect.banner":         "Connection lost. Reconnecting… Your place and wait below are from before and may be out of date.",
		"waiting.stale":            "(last known)",
		"leave.button":             "Leave the line",
		"leave.confirm":            "Leave the line? You lose your place; if you join again, you start at the back.",
		"leave.yes":                "Yes, leave the line",
		"leave.no":                 "Stay in line",
		"leave.failed":             "We could not take you out of the line. Please try again.",
		"left.heading":             "You left the line",
		"left.body":                "Your place has been given up. You can join again at any time, at the back of the line.",
		"left.again":               "Join the line again",
		"admitted.countdown_label": "Time until your turn starts",
		"accept.recovered":         "The waiting room is working normally again. Taking you back to the line…",
		// The admin dashboard (/admin).
		"admin.title":                       "Waiting room admin",
		"admin.nav.rooms":                   "Rooms",
		"admin.nav.logout":                  "Sign out",
		"admin.lang":                        "Language",
		"admin.na":                          "n/a",
		"admin.login.heading":               "Sign in",
		"admin.login.token":                 "Admin token",
		"admin.login.submit":                "Sign in",
		"admin.login.wrong":                 "That token is not right.",
		"admin.login.expired":               "The sign-in form expired. Please try again.",
		"admin.login.throttled":             "Too many wrong tokens from here. Wait a minute, then try again.",
		"admin.rooms.heading":               "Rooms",
		"admin.rooms.new":                   "New room",
		"admin.rooms.empty":                 "No rooms yet.",
		"admin.rooms.stale":                 "Redis is not answering: these are the rooms as last seen.",
		"admin.col.room":                    "Room",
		"admin.col.title":                   "Title",
		"admin.col.state":                   "State",
		"admin.state.paused":                "Paused",
		"admin.state.running":               "Admitting",
		"admin.state.full":                  "Full: admitting as slots free up",
		"admin.state.held":                  "Held: degraded mode",
		"admin.state.closed":                "Closed",
		"admin.state.sold_out":              "Sold out",
		"admin.state.scheduled":             "Scheduled: the pre-queue fills until the opening",
		"admin.room.heading":                "Room “{room}”",
		"admin.room.edit":                   "Edit settings",
		"admin.room.delete":                 "Delete room",
		"admin.room.open_page":              "Open the waiting page",
		"admin.live.heading":                "Right now",
		"admin.health.heading":              "Deployment",
		"admin.stat.waiting":                "Waiting",
		"admin.stat.active":                 "Active / capacity",
		"admin.stat.admitted_rate":          "Admitted per second",
		"admin.stat.entry_rate":             "Entries per second",
		"admin.stat.abandon_rate":           "Abandoned per second",
		"admin.stat.no_show_rate":           "Slots freed as no-shows",
		"admin.stat.idle_rate":              "Slots freed as idle",
		"admin.stat.tail_eta":               "Estimated wait at the back",
		"admin.stat.wait_p50":               "Time waited, median",
		"admin.stat.wait_p95":               "Time waited, 95th percentile",
		"admin.stat.line":                   "Line",
		"admin.stat.redis":                  "Redis",
		"admin.stat.degraded":               "Degraded mode",
		"admin.stat.outbox":                 "Outbox: pending / published / processed",
		"admin.stat.results":                "Results in the last minute",
		"admin.results":                     "{processed} processed, {rejected} rejected",
		"admin.redis.up":                    "up",
		"admin.redis.down":                  "down",
		"admin.degraded.on":                 "on",
		"admin.degraded.off":                "off",
		"admin.degraded.forced":             "(drill)",
		"admin.line.on":                     "on",
		"admin.line.off":                    "off",
		"admin.line.always":                 "activation is “always”",
		"admin.line.off_mode":               "activation is “off”: everyone goes straight in",
		"admin.line.adaptive_unknown":       "adaptive: no reading here",
		"admin.unit.per_s":                  "{n}/s",
		"admin.unit.one_per_s":              "1 per {n} s",
		"admin.unit.one_per_min":            "1 per {n} min",
		"admin.unit.per_min":                "{n}/min",
		"admin.unit.s":                      "{n} s",
		"admin.unit.min":                    "{n} min",
		"admin.unit.h":                      "{n} h",
		"admin.chart.counts":                "Waiting and active, last 15 minutes",
		"admin.chart.rates":                 "Per second, last 15 minutes",
		"admin.chart.eta":                   "Estimated wait at the back, last 15 minutes",
		"admin.chart.lapsed":                "Slots freed unused (no-show) or idle, per minute, last 15 minutes",
		"admin.chart.capacity":              "Capacity",
		"admin.chart.active":                "Active",
		"admin.conn.connecting":             "Connecting…",
		"admin.conn.ws":                     "Live",
		"admin.conn.sse":                    "Live (event stream)",
		"admin.conn.poll":                   "Refreshing regularly",
		"admin.conn.reconnecting":           "Connection lost, reconnecting…",
		"admin.conn.outage":                 "Redis is down: figures as of {time}",
		"admin.controls.heading":            "Controls",
		"admin.controls.hint":               "Changes apply within one admission tick, on every server.",
		"admin.control.pause":               "Pause admission",
		"admin.control.resume":              "Resume admission",
		"admin.control.pace":                "Pace and capacity",
		"admin.control.apply":               "Apply",
		"admin.control.activation":          "Activation",
		"admin.control.saved":               "Saved.",
		"admin.opening.heading":             "Scheduled opening",
		"admin.opening.opens_at":            "Opens at",
		"admin.opening.scheduled":           "In the pre-queue",
		"admin.opening.draw":                "Draw",
		"admin.opening.none":                "Not drawn yet: places are drawn at the first tick after the opening.",
		"admin.opening.drawn":               "{n} drawn at {at} by {server}",
		"admin.opening.hash":                "Order (SHA-256):",
		"admin.opening.open_hint":           "Open now moves the opening to now: the pre-queue is drawn at the next tick.",
		"admin.opening.open_now":            "Open now",
		"admin.control.failed":              "Not saved: {message}",
		"admin.activation.always":           "Always on",
		"admin.activation.off":              "Off",
		"admin.activation.adaptive":         "Adaptive",
		"admin.control.degrade":             "Degraded mode drill",
		"admin.degrade.hint":                "Force on starts a drill: degraded mode on every server. Automatic ends it and leaves the mode to the Redis checks, so a real outage always switches to degraded mode.",
		"admin.degrade.on":                  "Force on",
		"admin.degrade.auto":                "Automatic",
		"admin.field.room":                  "Room id",
		"admin.field.room.hint":             "Lowercase letters, digits and hyphens; it becomes the page address.",
		"admin.field.title":                 "Title",
		"admin.field.message":               "Message on the waiting page",
		"admin.text_lang.en":                "English (and every language left empty)",
		"admin.text_lang.ko":                "Korean",
		"admin.text_lang.same":              "Same as English",
		"admin.reason.redis_up":             "Redis answers",
		"admin.reason.redis_down":           "Redis does not answer",
		"admin.reason.drill":                "Forced on by an operator (drill)",
		"admin.chart.time":                  "Time",
		"admin.charts.heading_range":        "Charts, per minute:",
		"admin.chart.counts_range":          "In line (pre-queue included) and active",
		"admin.chart.rates_range":           "Per second, averaged over each minute",
		"admin.chart.lapsed_range":          "Slots freed unused (no-show), per minute",
		"admin.confirm.sold_out":            "Mark this room sold out? Everyone in line sees the sold-out page at once.",
		"admin.confirm.open_now":            "Open the room now? The pre-queue is drawn at once, and the opening cannot be moved back.",
		"admin.nocheckout.heading":          "No checkout set.",
		"admin.nocheckout.body":             "Admitted visitors land on a page saying this room has no checkout, not on your shop.",
		"admin.nocheckout.fix":              "Set your checkout's URL:",
		"admin.stat.pre_queue":              "of whom {n} in the pre-queue",
		"admin.range.label":                 "Range of the charts",
		"admin.range.live":                  "Last 15 minutes (live)",
		"admin.range.sale":                  "Whole sale",
		"admin.range.report":                "Sale report",
		"admin.report.heading":              "Sale report: {room}",
		"admin.report.csv":                  "Download CSV",
		"admin.report.json":                 "Download JSON",
		"admin.report.print":                "Print",
		"admin.report.empty":                "No minutes recorded in this range yet.",
		"admin.report.peak_line":            "Peak line",
		"admin.report.peak_line_at":         "Peak line at",
		"admin.report.arrivals":             "Arrivals",
		"admin.report.admitted":             "Total admitted",
		"admin.report.wait_p50":             "Median wait",
		"admin.report.wait_p95":             "95th percentile wait",
		"admin.report.abandoned":            "Left before their turn",
		"admin.report.abandon_rate":         "Abandon rate",
		"admin.report.no_shows":             "No-shows",
		"admin.report.completed":            "Completed checkouts",
		"admin.report.degraded":             "Degraded time",
		"admin.report.challenges":           "Challenges solved / issued",
		"admin.report.intents":              "Intents (degraded mode)",
		"admin.report.minutes":              "Minutes recorded",
		"admin.report.kept":                 "The minutes are kept for {days} days after each day ends.",
		"admin.charts.heading":              "Charts of the last 15 minutes",
		"admin.axis.people":                 "people",
		"admin.axis.per_s":                  "per second",
		"admin.axis.minutes":                "minutes",
		"admin.axis.per_min":                "per minute",
		"admin.field.target_url":            "Where admitted visitors go",
		"admin.field.capacity":              "Capacity (active at once)",
		"admin.field.batch_size":            "Admissions per tick",
		"admin.field.batch_interval_ms":     "Tick length (ms)",
		"admin.field.jitter_ms":             "Start spread (ms)",
		"admin.field.session_ttl_s":         "Slot held for (s)",
		"admin.field.abandon_after_s":       "Drop silent waiters after (s)",
		"admin.field.arrival_window_s":      "Slot lapses unless used within (s)",
		"admin.field.idle_after_s":          "Slot lapses after no request for (s)",
		"admin.field.activation":            "Activation",
		"admin.field.adaptive":              "Signal and thresholds",
		"admin.field.bot_protection":        "Bot protection",
		"admin.field.max_quantity":          "Most units one request may ask for in degraded mode (0: no cap)",
		"admin.field.checkout_after_intent": "A visitor whose degraded-mode request was not rejected may also check out from the line",
		"admin.field.paused":                "Paused",
		"admin.field.ends_at":               "Ends at (UTC)",
		"admin.field.opens_at":              "Opens at (UTC)",
		"admin.field.tiers":                 "Update tiers",
		"admin.field.theme_color":           "Accent colour",
		"admin.field.logo_url":              "Logo URL",
		"admin.field.shop_url":              "Back-to-shop link",
		"admin.field.product_id":            "Product id",
		"admin.field.product_name":          "Product name",
		"admin.field.allowed_embedders":     "Sites that may embed the line (origins, comma-separated)",
		"admin.field.user_secret":           "User token secret",
		"admin.field.user_secret.keep":      "Leave empty to keep the current secret.",
		"admin.field.user_secret_clear":     "Remove the secret",
		"admin.form.new_heading":            "New room",
		"admin.form.edit_heading":           "Edit “{room}”",
		"admin.form.create":                 "Create room",
		"admin.form.save":                   "Save",
		"admin.form.cancel":                 "Cancel",
		"admin.form.invalid":                "Please correct the fields marked below.",
		"admin.delete.heading":              "Delete “{room}”?",
		"admin.delete.body":                 "The room and its whole line are removed at once: everyone waiting loses their place.",
		"admin.delete.confirm":              "Delete the room",
		"admin.error.heading":               "Something went wrong",
		"admin.error.csrf":                  "This request had no valid security token. Reload the page and try again.",
		"admin.error.notfound":              "No such room.",
		"admin.error.unavailable":           "Redis is not answering; try again shortly.",
		"admin.error.back":                  "Back to the rooms",

		// The room form: sections, members of groups, help, choices, tier rows.
		"admin.section.basics":                                "Basics",
		"admin.section.pace":                                  "Pace and capacity",
		"admin.section.look":                                  "Look",
		"admin.section.protection":                            "Protection",
		"admin.section.adaptive":                              "Adaptive activation",
		"admin.field.target_url.help":                         "An absolute http(s) address, or a path on this site starting with /.",
		"admin.field.activation.help":                         "Adaptive opens the line only while the signal below reads high.",
		"admin.field.ends_at.help":                            "In UTC. Afterwards newcomers are turned away; those in line keep their place. Empty: no end.",
		"admin.field.opens_at.help":                           "In UTC. Before it visitors wait on a countdown; at it everyone who came early gets a random place, and later arrivals queue behind them. Empty: open now.",
		"admin.field.jitter_ms.help":                          "Each admitted visitor may start at a random moment within this spread.",
		"admin.field.abandon_after_s.help":                    "At least 20 s and at least twice the longest tier interval.",
		"admin.field.arrival_window_s.help":                   "An admitted visitor who has not reached checkout this long after their turn began loses the slot to the next in line. 0 is off: turn it off when checkout only verifies tokens offline (JWKS) and never calls verify.",
		"admin.field.idle_after_s.help":                       "At the gate or forward auth, an admitted visitor who makes no request this long loses the slot. 0 is off.",
		"admin.field.tiers.help":                              "How often a waiter hears of its place, by position; the last tier has no upper position.",
		"admin.field.adaptive.help":                           "Used with activation “Adaptive”: the line opens when a reading reaches “open at” and closes after the given windows below “close at”.",
		"admin.field.bot_protection.proof_of_work":            "Proof of work",
		"admin.field.bot_protection.pow_cost":                 "Work per place (scrypt runs, at most)",
		"admin.field.bot_protection.enters_per_ip_per_minute": "New places per client per minute (0: no limit)",
		"admin.field.bot_protection.places_per_ip":            "Live places per client (0: no limit)",
		"admin.field.bot_protection.unarrived_per_network":    "Admitted but not yet arrived, per network (0: no limit)",
		"admin.field.adaptive.signal":                         "Signal",
		"admin.field.adaptive.prometheus_url":                 "Prometheus URL",
		"admin.field.adaptive.query":                          "PromQL query",
		"admin.field.adaptive.latency_target_ms":              "Latency target (ms)",
		"admin.field.adaptive.open_at":                        "Open at (reading)",
		"admin.field.adaptive.close_at":                       "Close below (reading)",
		"admin.field.adaptive.window_s":                       "Window (s)",
		"admin.field.adaptive.windows_to_close":               "Windows below before closing",
		"admin.choice.none":                                   "None",
		"admin.choice.proof_of_work.on":                       "On",
		"admin.choice.proof_of_work.off":                      "Off",
		"admin.choice.signal.prometheus":                      "Prometheus query",
		"admin.choice.signal.gate_inflight":                   "Gate in-flight requests",
		"admin.choice.signal.gate_latency":                    "Gate latency",
		"admin.tiers.max_position":                            "Up to position",
		"admin.tiers.interval_ms":                             "Update every (ms)",
		"admin.tiers.beyond":                                  "everyone beyond",
		"admin.tiers.add":                                     "Add a tier",
		"admin.tiers.remove":                                  "Remove this tier",
		// The dashboard's words for refused settings (queue.Rule) and the
		// adaptive controller's reasons (issue 14: the Korean dashboard).
		"admin.rule.between":            "Must be between {min} and {max}.",
		"admin.rule.between_no_limit":   "Must be between 0 (no limit) and {max}.",
		"admin.rule.between_no_cap":     "Must be between 0 (no cap) and {max}.",
		"admin.rule.between_off":        "Must be between 0 (off) and {max}.",
		"admin.rule.max_chars":          "Must be at most {n} characters.",
		"admin.rule.min_chars":          "Must be at least {n} characters when set.",
		"admin.rule.max_items":          "List at most {n}.",
		"admin.rule.one_of":             "Must be one of: {choices}.",
		"admin.rule.before_ends_at":     "Must be before the end time.",
		"admin.rule.colour":             "Must be a colour such as #1a73e8 or #fff.",
		"admin.rule.required":           "Required.",
		"admin.rule.url_chars":          "Must not contain spaces, control characters or backslashes.",
		"admin.rule.url":                "Not an address.",
		"admin.rule.url_scheme":         "Must start with http:// or https://.",
		"admin.rule.url_host":           "Must name a host.",
		"admin.rule.url_user_info":      "Must not carry a user name or password.",
		"admin.rule.url_absolute":       "Must be a full http(s) address.",
		"admin.rule.url_or_path":        "Must be a full http(s) address, or a path starting with a single /.",
		"admin.rule.origin":             "Must be an origin: http(s)://host[:port].",
		"admin.rule.origin_bare":        "Must be an origin without path, query or wildcard: http(s)://host[:port].",
		"admin.rule.origin_as_sent":     "Write it as browsers do: {origin}",
		"admin.rule.adaptive_needed":    "Required with activation “Adaptive”.",
		"admin.rule.prometheus_url":     "Must be the base address of the Prometheus HTTP API.",
		"admin.rule.needed_by_signal":   "Required with this signal.",
		"admin.rule.positive_by_signal": "Must be above 0 with this signal.",
		"admin.rule.positive":           "Must be above 0.",
		"admin.rule.below_open_at":      "Must be at least 0 and below “open at”.",
		"admin.rule.abandon_after":      "Must be at least {min} s and at least twice the longest tier interval ({longest} ms).",
		"admin.rule.tiers_empty":        "List at least one tier.",
		"admin.rule.tier_open_last":     "Only the last tier may be left without an upper position.",
		"admin.rule.tier_ascending":     "Must be greater than the tier before.",
		"admin.rule.tier_last_open":     "The last tier must have no upper position.",
		"admin.rule.text_or_langs":      "Write a text, or a text in at least one language.",
		"admin.rule.lang":               "Not a supported language.",
		"admin.rule.lang_empty":         "Must not be empty (leave the language out to show English).",
		"admin.rule.number":             "Must be a number.",
		"admin.rule.string":             "Must be a text.",
		"admin.rule.bool":               "Must be on or off.",
		"admin.rule.list":               "Must be a list.",
		"admin.rule.object":             "Must be a group of settings.",
		"admin.rule.type":               "Has the wrong kind of value.",
		"admin.rule.local_text":         "Must be a text, or texts by language.",
		"admin.rule.json":               "The form could not be read.",
		"admin.rule.json_empty":         "Nothing was sent.",
		"admin.rule.one_object":         "The form could not be read.",
		"admin.rule.unknown_field":      "Not a known setting.",
		"admin.rule.empty_name":         "A setting has no name.",
		"admin.rule.datetime":           "Must be a date and time in UTC, such as 2030-01-02 15:04.",
		"admin.rule.room_id":            "Use 1 to 64 lowercase letters, digits and hyphens.",
		"admin.rule.room_taken":         "A room with this id already exists.",
		"admin.rule.at_tier":            "Tier {n}: {message}",
		"admin.rule.at_item":            "Item {n}: {message}",
		"admin.rule.at_lang":            "{lang}: {message}",
		"admin.lang_name.en":            "English",
		"admin.lang_name.ko":            "Korean",
		"admin.line.new":                "New room: closed until a reading reaches “open at”.",
		"admin.line.opened":             "Reading {reading} reached “open at” ({threshold}).",
		"admin.line.closed":             "{windows} windows in a row below “close at” ({threshold}); last reading {reading}.",
		"admin.line.signal_error":       "The signal cannot be read, so the line keeps its state:",
		"admin.error.internal":          "Something went wrong on the server. Try again; if it keeps happening, see the server's log.",
		"admin.error.bad_request":       "The request could not be read.",
		"admin.error.no_degrade":        "This server has no degraded mode.",
		"admin.error.not_scheduled":     "The room has no opening ahead: there is nothing to open.",
		"admin.error.busy":              "The server is busy. Try again in a moment.",
		"admin.error.http":              "The server answered with status {status}.",
		"admin.error.network":           "The server could not be reached.",
		// Queueing methods, sold out and a full line (issue 14).
		"draw.heading":                     "You're in the draw",
		"draw.body":                        "This sale admits people by lot: at each admission, the next ones are drawn at random from everyone waiting. There is no place in line; keep this page open and we'll take you in if you are drawn.",
		"draw.paused":                      "Admission is paused for the moment. You stay in the draw.",
		"soldout.heading":                  "Sold out",
		"soldout.body":                     "Sorry, everything has been sold.",
		"full.heading":                     "The line is full",
		"full.body":                        "So many people are waiting that the line takes nobody more for now. Please try again in a little while.",
		"full.retry.one":                   "Trying again in 1 second…",
		"full.retry.other":                 "Trying again in {n} seconds…",
		"full.again":                       "Try again now",
		"maintenance.heading":              "The waiting room is closed for maintenance",
		"maintenance.body":                 "Nobody is taking places at the moment. Please come back later; this page updates by itself when it opens again.",
		"admin.field.queueing_method":      "Queueing method",
		"admin.field.queueing_method.help": "Random draws each admission among everyone waiting (a lottery); passthrough admits everyone at once; reject shows a closed page (maintenance).",
		"admin.method.fifo":                "First come, first served",
		"admin.method.random":              "Random draw",
		"admin.method.passthrough":         "Passthrough (no line)",
		"admin.method.reject":              "Reject (closed)",
		"admin.field.sold_out":             "Sold out",
		"admin.field.sold_out_message":     "Message on the sold out page",
		"admin.field.max_waiting":          "Most people in line (0: no limit)",
		"admin.field.max_waiting.help":     "Beyond it newcomers see \"the line is full\"; those in line keep their places.",
		"admin.soldout.on":                 "Mark sold out",
		"admin.soldout.off":                "Undo sold out",
		"admin.soldout.state":              "Sold out: everyone in line sees the sold out page.",
		// Shopper pages: the draw's lost connection, an unknown request on the accept page (issue 14).
		"draw.reconnecting":      "Connection lost. Reconnecting… You stay in the draw; the figures below are from before and may be out of date.",
		"accept.unknown.heading": "We don't know this request",
		"accept.unknown.body":    "We have no record of this request for you. The link may be incomplete, or the request was made in another browser.",
		"accept.unknown.again":   "Make a new request",

		// "Tell me when it's my turn" (web/notify.ts), offered on long waits.
		"notify.button":  "Tell me when it's my turn",
		"notify.on":      "On: this browser will show a notification when it's your turn, even with this tab in the background. Keep the tab open.",
		"notify.off":     "Off: no notification. This tab's title still changes when it's your turn.",
		"notify.blocked": "This browser blocks notifications from this page. Keep this tab open: its title changes when it's your turn.",
		"notify.body":    "Your turn in \"{title}\" has started. Go back to its tab to continue to the shop.",
		// Under a date field of the room form: the UTC value in the operator's zone.
		"admin.field.local_time": "In your time zone: {time}",
	},
	Korean: {
		"page.title":               "대기실",
		"waiting.heading":          "대기열에 들어왔습니다",
		"waiting.intro":            "이 페이지를 열어 두세요. 차례가 되면 입장시켜 드립니다.",
		"waiting.position":         "내 대기 순번",
		"waiting.ahead.zero":       "내 앞에 아무도 없습니다",
		"waiting.ahead.other":      "내 앞에 {n}명",
		"waiting.total.other":      "{n}명",
		"waiting.eta":              "예상 대기 시간",
		"waiting.in_line":          "전체 대기 인원",
		"waiting.progress":         "대기열 진행률",
		"waiting.last_update":      "마지막 업데이트",
		"waiting.paused":           "입장이 잠시 중지되었습니다. 대기 순번은 그대로 유지됩니다.",
		"eta.unknown":              "계산 중…",
		"eta.paused":               "입장이 중지된 동안에는 없습니다",
		"eta.under_minute":         "1분 미만",
		"eta.minutes.other":        "약 {n}분",
		"eta.hours.other":          "약 {n}시간",
		"eta.range_minutes":        "약 {lo}–{hi}분",
		"eta.range_hours":          "약 {lo}–{hi}시간",
		"conn.refresh.other":       "이 페이지는 {n}초마다 새로고침됩니다",
		"conn.connecting":          "연결 중…",
		"conn.ws":                  "실시간 업데이트 중",
		"conn.sse":                 "실시간 업데이트 중 (이벤트 스트림)",
		"conn.poll":                "주기적으로 업데이트 확인 중",
		"conn.reconnecting":        "연결이 끊겼습니다. 다시 연결하는 중…",
		"scheduled.heading":        "곧 판매가 시작됩니다",
		"scheduled.body":           "{time}에 대기 순번을 추첨합니다. 그 전에 도착한 모든 분이 무작위로 순번을 받으므로 서두르거나 새로고침할 필요가 없습니다.",
		"scheduled.countdown":      "오픈까지 {t}",
		"scheduled.timer_label":    "오픈까지 남은 시간",
		"scheduled.drawing":        "순번을 추첨하고 있습니다…",
		"scheduled.position":       "내 순번",
		"scheduled.unknown":        "오픈 시 추첨",
		"scheduled.keep_open":      "이 페이지를 열어 두세요. 추첨이 끝나면 순번이 바로 표시됩니다.",
		"admitted.heading":         "고객님 차례입니다",
		"admitted.countdown.other": "{n}초 후 쇼핑 페이지로 이동합니다…",
		"admitted.now":             "지금 쇼핑 페이지로 이동합니다…",
		"admitted.go":              "쇼핑 페이지로 이동",
		"admitted.hint":            "자동으로 이동하지 않으면 버튼을 눌러 주세요.",
		"admitted.held":            "차례가 시작되면 {d} 동안 유지됩니다.",
		"admitted.arrive":          "{d} 안에 쇼핑 페이지로 이동하지 않으면 다음 분께 차례가 넘어갑니다.",
		"duration.seconds.other":   "{n}초",
		"duration.minutes.other":   "{n}분",
		"duration.hours.other":     "{n}시간",
		"expired.heading":          "대기 순번이 만료되었습니다",
		"expired.body":             "페이지를 한동안 닫아 두는 등의 이유로 순번이 더 이상 유지되지 않습니다. 다시 줄을 설 수 있습니다.",
		"expired.again":            "다시 입장하기",
		"expired.no_show.heading":  "차례가 지나갔습니다",
		"expired.no_show.body":     "차례가 시작된 뒤 제때 결제 페이지에 오지 않아 자리가 다음 대기자에게 넘어갔습니다. 다시 줄을 설 수 있습니다.",
		"expired.idle.heading":     "차례가 지나갔습니다",
		"expired.idle.body":        "결제 페이지에서 한동안 아무 활동이 없어 자리가 다음 대기자에게 넘어갔습니다. 다시 줄을 설 수 있습니다.",
		"closed.heading":           "대기실이 종료되었습니다",
		"closed.body":              "판매가 끝났거나 대기실이 더 이상 운영되지 않습니다.",
		"ended.thanks":             "기다려 주셔서 감사합니다.",
		"ended.back":               "쇼핑몰로 돌아가기",
		"bypassed.heading":         "기다리지 않고 입장할 수 있습니다",
		"bypassed.go":              "계속하기",
		"embed.joining":            "대기열에 들어가는 중…",
		"checking.heading":         "브라우저를 확인하는 중",
		"checking.body":            "1~2초 정도 걸리며, 스크립트가 대기 순번을 가져가지 못하게 합니다. 잠시 기다려 주세요…",
		"checking.failed":          "확인을 마치지 못했습니다. 다시 시도해 주세요.",
		"checking.longer":          "이번 확인은 평소보다 약 {factor}배 오래 걸립니다. 사용 중인 네트워크가 이미 이 대기열에서 {held}개의 자리를 차지하고 있어, 자리가 하나 늘 때마다 더 많은 작업이 필요합니다. 잠시 기다려 주세요…",
		"checking.again":           "다시 시도",
		"checking.nojs":            "이 대기실은 대기 순번을 드리기 전에 브라우저를 확인하며, 이를 위해 JavaScript가 필요합니다. JavaScript를 켜고 이 페이지를 새로 고쳐 주세요.",
		"embed.forbidden":          "이 사이트에서는 이 대기실을 표시할 수 없습니다.",
		"notfound.heading":         "대기실을 찾을 수 없습니다",
		"notfound.body":            "“{room}” 대기실이 없습니다. 접속한 링크를 확인해 주세요.",
		"nocheckout.heading":       "이 판매에는 아직 결제 페이지가 없습니다",
		"nocheckout.body":          "“{room}” 대기실에서 차례가 되었지만, 이 대기실에는 아직 결제 주소가 설정되지 않아 보내 드릴 곳이 없습니다. 주문되거나 결제된 것은 없습니다.",
		"nocheckout.body.anon":     "대기실에서 차례가 되었지만, 이 대기실에는 아직 결제 주소가 설정되지 않아 보내 드릴 곳이 없습니다. 주문되거나 결제된 것은 없습니다.",
		"nocheckout.operator":      "이 판매를 운영하신다면 대시보드(/admin)나 관리 API(PATCH /admin/api/rooms/{room})에서 대기실의 target_url을 설정해 주세요.",
		"error.heading":            "문제가 발생했습니다",
		"error.body":               "잠시 후 다시 시도해 주세요.",
		"error.busy.heading":       "대기실이 혼잡합니다",
		"error.busy.body":          "자동으로 다시 시도하고 있습니다. 이 페이지를 닫지 마세요.",
		"error.status":             "오류 {n}",
		"accept.heading":           "주문 요청하기",
		"accept.intro":             "지금은 대기실에 접속이 몰려 요청을 먼저 받아 두고, 결제가 가능해지는 대로 순서대로 처리합니다. 순서는 그대로 유지됩니다.",
		"accept.product":           "상품",
		"accept.quantity":          "수량",
		"accept.submit":            "요청 보내기",
		"accept.status":            "요청 상태",
		"accept.status.accepted":   "요청을 받아 안전하게 저장했습니다. 결제로 전달을 기다리는 중…",
		"accept.status.published":  "결제로 전달했습니다. 결과를 기다리는 중…",
		"accept.status.processed":  "주문이 완료되었습니다.",
		"accept.status.rejected":   "주문을 완료하지 못했습니다.",
		"accept.reason.sold_out":   "죄송합니다. 상품이 모두 판매되었습니다.",
		"accept.line_back":         "대기실이 다시 정상적으로 운영되고 있습니다.",
		"accept.ordered":           "대기실 장애 중에 이미 주문 요청을 남기셨습니다. 그 요청이 주문으로 처리되므로 다시 줄을 설 필요가 없습니다.",
		"accept.retry":             "지금은 요청을 저장하지 못했습니다. 잠시 후 다시 시도해 주세요. 곧 자동으로 다시 보내 드립니다.",
		"accept.line_back.go":      "대기실로 가기",
		"waiting.since":            "줄 선 시각",
		"reconnect.banner":         "연결이 끊겼습니다. 다시 연결하는 중… 아래의 순번과 대기 시간은 이전 정보라 최신이 아닐 수 있습니다.",
		"waiting.stale":            "(마지막 확인)",
		"leave.button":             "대기열에서 나가기",
		"leave.confirm":            "대기열에서 나가시겠습니까? 순번을 잃게 되며, 다시 들어오면 맨 뒤에서 시작합니다.",
		"leave.yes":                "네, 나가겠습니다",
		"leave.no":                 "계속 기다리기",
		"leave.failed":             "대기열에서 나가지 못했습니다. 다시 시도해 주세요.",
		"left.heading":             "대기열에서 나왔습니다",
		"left.body":                "순번이 해제되었습니다. 언제든 다시 줄을 설 수 있으며, 맨 뒤에서 시작합니다.",
		"left.again":               "다시 줄 서기",
		"admitted.countdown_label": "차례 시작까지 남은 시간",
		"accept.recovered":         "대기실이 다시 정상적으로 운영됩니다. 대기열로 돌아갑니다…",
		// The admin dashboard (/admin).
		"admin.title":                       "대기실 관리",
		"admin.nav.rooms":                   "대기실 목록",
		"admin.nav.logout":                  "로그아웃",
		"admin.lang":                        "언어",
		"admin.na":                          "해당 없음",
		"admin.login.heading":               "로그인",
		"admin.login.token":                 "관리자 토큰",
		"admin.login.submit":                "로그인",
		"admin.login.wrong":                 "토큰이 올바르지 않습니다.",
		"admin.login.expired":               "로그인 양식이 만료되었습니다. 다시 시도해 주세요.",
		"admin.login.throttled":             "잘못된 토큰이 너무 많이 입력되었습니다. 1분 후에 다시 시도해 주세요.",
		"admin.rooms.heading":               "대기실",
		"admin.rooms.new":                   "새 대기실",
		"admin.rooms.empty":                 "아직 대기실이 없습니다.",
		"admin.rooms.stale":                 "Redis가 응답하지 않아 마지막으로 확인한 대기실 목록을 보여 드립니다.",
		"admin.col.room":                    "대기실",
		"admin.col.title":                   "제목",
		"admin.col.state":                   "상태",
		"admin.state.paused":                "일시 중지",
		"admin.state.running":               "입장 진행 중",
		"admin.state.full":                  "정원 초과: 자리가 나는 대로 입장",
		"admin.state.held":                  "보류: 성능 저하 모드",
		"admin.state.closed":                "종료됨",
		"admin.state.sold_out":              "품절",
		"admin.state.scheduled":             "오픈 예정: 오픈 때까지 사전 대기열에 모입니다",
		"admin.room.heading":                "“{room}” 대기실",
		"admin.room.edit":                   "설정 편집",
		"admin.room.delete":                 "대기실 삭제",
		"admin.room.open_page":              "대기 페이지 열기",
		"admin.live.heading":                "현재 현황",
		"admin.health.heading":              "시스템 상태",
		"admin.stat.waiting":                "대기 인원",
		"admin.stat.active":                 "입장 중 / 정원",
		"admin.stat.admitted_rate":          "초당 입장",
		"admin.stat.entry_rate":             "초당 진입",
		"admin.stat.abandon_rate":           "초당 이탈",
		"admin.stat.no_show_rate":           "오지 않아 반납된 자리",
		"admin.stat.idle_rate":              "요청이 없어 반납된 자리",
		"admin.stat.tail_eta":               "맨 뒤 예상 대기 시간",
		"admin.stat.wait_p50":               "대기 시간 중앙값",
		"admin.stat.wait_p95":               "대기 시간 95번째 백분위수",
		"admin.stat.line":                   "대기열",
		"admin.stat.redis":                  "Redis",
		"admin.stat.degraded":               "비상 모드",
		"admin.stat.outbox":                 "아웃박스: 대기 / 전송됨 / 처리됨",
		"admin.stat.results":                "최근 1분 결과",
		"admin.results":                     "처리 {processed}건, 거절 {rejected}건",
		"admin.redis.up":                    "정상",
		"admin.redis.down":                  "응답 없음",
		"admin.degraded.on":                 "켜짐",
		"admin.degraded.off":                "꺼짐",
		"admin.degraded.forced":             "(훈련)",
		"admin.line.on":                     "켜짐",
		"admin.line.off":                    "꺼짐",
		"admin.line.always":                 "활성화 설정이 “항상 켜기”입니다",
		"admin.line.off_mode":               "활성화 설정이 “끄기”입니다: 모두 바로 입장합니다",
		"admin.line.adaptive_unknown":       "자동 조절: 이 서버에 측정값이 없습니다",
		"admin.unit.per_s":                  "초당 {n}",
		"admin.unit.one_per_s":              "{n}초에 1",
		"admin.unit.one_per_min":            "{n}분에 1",
		"admin.unit.per_min":                "분당 {n}",
		"admin.unit.s":                      "{n}초",
		"admin.unit.min":                    "{n}분",
		"admin.unit.h":                      "{n}시간",
		"admin.chart.counts":                "대기 및 입장 인원, 최근 15분",
		"admin.chart.rates":                 "초당 처리량, 최근 15분",
		"admin.chart.eta":                   "맨 뒤 예상 대기 시간, 최근 15분",
		"admin.chart.lapsed":                "오지 않거나 요청이 없어 반납된 자리, 분당, 최근 15분",
		"admin.chart.capacity":              "정원",
		"admin.chart.active":                "입장 중",
		"admin.conn.connecting":             "연결 중…",
		"admin.conn.ws":                     "실시간",
		"admin.conn.sse":                    "실시간 (이벤트 스트림)",
		"admin.conn.poll":                   "주기적으로 새로 고침",
		"admin.conn.reconnecting":           "연결이 끊겼습니다. 다시 연결하는 중…",
		"admin.conn.outage":                 "Redis 중단: {time} 기준 수치",
		"admin.controls.heading":            "제어",
		"admin.controls.hint":               "변경 사항은 모든 서버에서 입장 주기 한 번 안에 적용됩니다.",
		"admin.control.pause":               "입장 일시 중지",
		"admin.control.resume":              "입장 재개",
		"admin.control.pace":                "입장 속도와 정원",
		"admin.control.apply":               "적용",
		"admin.control.activation":          "활성화",
		"admin.control.saved":               "저장했습니다.",
		"admin.opening.heading":             "예약 오픈",
		"admin.opening.opens_at":            "오픈 시각",
		"admin.opening.scheduled":           "사전 대기 인원",
		"admin.opening.draw":                "추첨",
		"admin.opening.none":                "아직 추첨하지 않았습니다. 오픈 후 첫 틱에서 순번을 추첨합니다.",
		"admin.opening.drawn":               "{n}명 추첨 ({at}, 서버 {server})",
		"admin.opening.hash":                "순서 (SHA-256):",
		"admin.opening.open_hint":           "지금 열기를 누르면 오픈 시각이 지금으로 바뀌고, 다음 틱에서 사전 대기열을 추첨합니다.",
		"admin.opening.open_now":            "지금 열기",
		"admin.control.failed":              "저장하지 못했습니다: {message}",
		"admin.activation.always":           "항상 켜기",
		"admin.activation.off":              "끄기",
		"admin.activation.adaptive":         "자동 조절",
		"admin.control.degrade":             "비상 모드 훈련",
		"admin.degrade.hint":                "강제로 켜기는 훈련을 시작해 모든 서버를 비상 모드로 바꿉니다. 자동은 훈련을 끝내고 Redis 점검 결과에 맡기므로, 실제 장애에는 언제나 비상 모드로 바뀝니다.",
		"admin.degrade.on":                  "강제로 켜기",
		"admin.degrade.auto":                "자동",
		"admin.field.room":                  "대기실 ID",
		"admin.field.room.hint":             "영문 소문자, 숫자, 하이픈만 쓸 수 있으며 페이지 주소가 됩니다.",
		"admin.field.title":                 "제목",
		"admin.field.message":               "대기 페이지 안내 문구",
		"admin.text_lang.en":                "영어 (비워 둔 언어에도 표시)",
		"admin.text_lang.ko":                "한국어",
		"admin.text_lang.same":              "영어와 같음",
		"admin.reason.redis_up":             "Redis 응답 정상",
		"admin.reason.redis_down":           "Redis 응답 없음",
		"admin.reason.drill":                "운영자가 강제로 켬 (훈련)",
		"admin.chart.time":                  "시각",
		"admin.charts.heading_range":        "분 단위 차트:",
		"admin.chart.counts_range":          "줄(사전 대기 포함)과 입장 중",
		"admin.chart.rates_range":           "초당, 분마다 평균",
		"admin.chart.lapsed_range":          "쓰이지 않고 반납된 자리(미방문), 분당",
		"admin.confirm.sold_out":            "이 대기실을 매진으로 표시할까요? 줄에 있는 모든 사람에게 바로 매진 페이지가 보입니다.",
		"admin.confirm.open_now":            "지금 대기실을 열까요? 사전 대기열을 바로 추첨하며, 오픈 시각은 되돌릴 수 없습니다.",
		"admin.nocheckout.heading":          "결제 페이지가 설정되지 않았습니다.",
		"admin.nocheckout.body":             "입장한 방문자는 쇼핑몰이 아니라 이 대기실에 결제 페이지가 없다는 안내 페이지로 갑니다.",
		"admin.nocheckout.fix":              "결제 페이지 URL 설정:",
		"admin.stat.pre_queue":              "그중 사전 대기열 {n}명",
		"admin.range.label":                 "차트 기간",
		"admin.range.live":                  "최근 15분 (실시간)",
		"admin.range.sale":                  "판매 전체",
		"admin.range.report":                "판매 보고서",
		"admin.report.heading":              "판매 보고서: {room}",
		"admin.report.csv":                  "CSV 내려받기",
		"admin.report.json":                 "JSON 내려받기",
		"admin.report.print":                "인쇄",
		"admin.report.empty":                "이 기간에 기록된 분이 아직 없습니다.",
		"admin.report.peak_line":            "최대 대기 줄",
		"admin.report.peak_line_at":         "최대 대기 시각",
		"admin.report.arrivals":             "도착",
		"admin.report.admitted":             "총 입장",
		"admin.report.wait_p50":             "대기 시간 중앙값",
		"admin.report.wait_p95":             "대기 시간 95번째 백분위",
		"admin.report.abandoned":            "차례 전에 떠남",
		"admin.report.abandon_rate":         "이탈률",
		"admin.report.no_shows":             "미방문",
		"admin.report.completed":            "완료된 결제",
		"admin.report.degraded":             "성능 저하 모드 시간",
		"admin.report.challenges":           "푼 챌린지 / 발급한 챌린지",
		"admin.report.intents":              "인텐트 (성능 저하 모드)",
		"admin.report.minutes":              "기록된 분",
		"admin.report.kept":                 "각 날짜가 끝난 뒤 {days}일 동안 보관합니다.",
		"admin.charts.heading":              "최근 15분 차트",
		"admin.axis.people":                 "명",
		"admin.axis.per_s":                  "초당",
		"admin.axis.minutes":                "분",
		"admin.axis.per_min":                "분당",
		"admin.field.target_url":            "입장한 방문자가 이동할 주소",
		"admin.field.capacity":              "정원 (동시 입장 인원)",
		"admin.field.batch_size":            "주기당 입장 인원",
		"admin.field.batch_interval_ms":     "입장 주기 (ms)",
		"admin.field.jitter_ms":             "시작 분산 시간 (ms)",
		"admin.field.session_ttl_s":         "입장 자리 유지 시간 (초)",
		"admin.field.abandon_after_s":       "응답 없는 대기자 제외 시간 (초)",
		"admin.field.arrival_window_s":      "입장 후 이 시간 안에 오지 않으면 자리 반납 (초)",
		"admin.field.idle_after_s":          "요청이 없으면 자리 반납 (초)",
		"admin.field.activation":            "활성화",
		"admin.field.adaptive":              "신호와 기준",
		"admin.field.bot_protection":        "봇 방어",
		"admin.field.max_quantity":          "장애 모드에서 한 번에 요청할 수 있는 최대 수량 (0: 제한 없음)",
		"admin.field.checkout_after_intent": "장애 모드 요청이 거절되지 않은 방문자도 대기열을 거쳐 결제할 수 있음",
		"admin.field.paused":                "일시 중지",
		"admin.field.ends_at":               "종료 시각 (UTC)",
		"admin.field.opens_at":              "오픈 시각 (UTC)",
		"admin.field.tiers":                 "업데이트 주기 단계",
		"admin.field.theme_color":           "강조 색상",
		"admin.field.logo_url":              "로고 URL",
		"admin.field.shop_url":              "쇼핑몰로 돌아가는 링크",
		"admin.field.product_id":            "상품 ID",
		"admin.field.product_name":          "상품 이름",
		"admin.field.allowed_embedders":     "대기열을 삽입할 수 있는 사이트 (오리진, 쉼표로 구분)",
		"admin.field.user_secret":           "사용자 토큰 비밀 키",
		"admin.field.user_secret.keep":      "비워 두면 현재 비밀 키를 그대로 유지합니다.",
		"admin.field.user_secret_clear":     "비밀 키 삭제",
		"admin.form.new_heading":            "새 대기실",
		"admin.form.edit_heading":           "“{room}” 설정 편집",
		"admin.form.create":                 "대기실 만들기",
		"admin.form.save":                   "저장",
		"admin.form.cancel":                 "취소",
		"admin.form.invalid":                "아래 표시된 항목을 고쳐 주세요.",
		"admin.delete.heading":              "“{room}” 대기실을 삭제할까요?",
		"admin.delete.body":                 "대기실과 대기열 전체가 즉시 삭제되며, 기다리던 모든 사람이 순번을 잃습니다.",
		"admin.delete.confirm":              "대기실 삭제",
		"admin.error.heading":               "문제가 발생했습니다",
		"admin.error.csrf":                  "요청에 유효한 보안 토큰이 없습니다. 페이지를 새로 고친 뒤 다시 시도해 주세요.",
		"admin.error.notfound":              "해당 대기실이 없습니다.",
		"admin.error.unavailable":           "Redis가 응답하지 않습니다. 잠시 후 다시 시도해 주세요.",
		"admin.error.back":                  "대기실 목록으로",

		// The room form: sections, members of groups, help, choices, tier rows.
		"admin.section.basics":                                "기본",
		"admin.section.pace":                                  "입장 속도와 정원",
		"admin.section.look":                                  "모양",
		"admin.section.protection":                            "보호",
		"admin.section.adaptive":                              "자동 조절",
		"admin.field.target_url.help":                         "http(s)로 시작하는 전체 주소 또는 /로 시작하는 이 사이트의 경로입니다.",
		"admin.field.activation.help":                         "자동 조절은 아래 신호가 높을 때만 대기열을 엽니다.",
		"admin.field.ends_at.help":                            "UTC 기준입니다. 이후에는 새 방문자를 받지 않으며, 대기 중인 사람은 자리를 유지합니다. 비워 두면 종료 시각이 없습니다.",
		"admin.field.opens_at.help":                           "UTC 기준입니다. 그 전에는 카운트다운을 보며 기다리고, 오픈 시각에 미리 온 모든 사람이 무작위로 순번을 받으며 이후 도착한 사람은 그 뒤에 줄을 섭니다. 비워 두면 바로 엽니다.",
		"admin.field.jitter_ms.help":                          "입장한 방문자마다 이 범위 안의 임의 시점에 시작할 수 있습니다.",
		"admin.field.abandon_after_s.help":                    "20초 이상이면서 가장 긴 단계 주기의 두 배 이상이어야 합니다.",
		"admin.field.arrival_window_s.help":                   "입장한 방문자가 차례가 시작된 뒤 이 시간 안에 결제 페이지에 오지 않으면 자리가 다음 사람에게 넘어갑니다. 0은 끔: 결제 페이지가 토큰을 공개 키로만 직접 확인하고 확인 API를 한 번도 부르지 않는다면 끄세요.",
		"admin.field.idle_after_s.help":                       "게이트나 포워드 인증에서 입장한 방문자가 이 시간 동안 요청이 없으면 자리를 잃습니다. 0은 끔.",
		"admin.field.tiers.help":                              "순번에 따라 대기자가 자기 순번을 전달받는 주기입니다. 마지막 단계에는 상한 순번이 없습니다.",
		"admin.field.adaptive.help":                           "활성화가 “자동 조절”일 때 쓰입니다. 측정값이 “열기 기준”에 이르면 대기열이 열리고, “닫기 기준” 아래로 정해진 구간 수만큼 머물면 닫힙니다.",
		"admin.field.bot_protection.proof_of_work":            "작업 증명",
		"admin.field.bot_protection.pow_cost":                 "자리당 작업량 (최대 scrypt 횟수)",
		"admin.field.bot_protection.enters_per_ip_per_minute": "클라이언트당 분당 새 자리 (0: 제한 없음)",
		"admin.field.bot_protection.places_per_ip":            "클라이언트당 유효한 자리 (0: 제한 없음)",
		"admin.field.bot_protection.unarrived_per_network":    "네트워크당 입장 후 아직 오지 않은 자리 (0: 제한 없음)",
		"admin.field.adaptive.signal":                         "신호",
		"admin.field.adaptive.prometheus_url":                 "Prometheus URL",
		"admin.field.adaptive.query":                          "PromQL 쿼리",
		"admin.field.adaptive.latency_target_ms":              "목표 지연 시간 (ms)",
		"admin.field.adaptive.open_at":                        "열기 기준 (측정값)",
		"admin.field.adaptive.close_at":                       "닫기 기준 (측정값 미만)",
		"admin.field.adaptive.window_s":                       "측정 구간 (초)",
		"admin.field.adaptive.windows_to_close":               "닫기 전 기준 미만 구간 수",
		"admin.choice.none":                                   "없음",
		"admin.choice.proof_of_work.on":                       "켜기",
		"admin.choice.proof_of_work.off":                      "끄기",
		"admin.choice.signal.prometheus":                      "Prometheus 쿼리",
		"admin.choice.signal.gate_inflight":                   "게이트 처리 중 요청",
		"admin.choice.signal.gate_latency":                    "게이트 지연 시간",
		"admin.tiers.max_position":                            "순번 상한",
		"admin.tiers.interval_ms":                             "업데이트 주기 (ms)",
		"admin.tiers.beyond":                                  "그 뒤 모두",
		"admin.tiers.add":                                     "단계 추가",
		"admin.tiers.remove":                                  "이 단계 삭제",
		// The dashboard's words for refused settings (queue.Rule) and the
		// adaptive controller's reasons (issue 14: the Korean dashboard).
		"admin.rule.between":            "{min}에서 {max} 사이여야 합니다.",
		"admin.rule.between_no_limit":   "0(제한 없음)에서 {max} 사이여야 합니다.",
		"admin.rule.between_no_cap":     "0(제한 없음)에서 {max} 사이여야 합니다.",
		"admin.rule.between_off":        "0(끔)에서 {max} 사이여야 합니다.",
		"admin.rule.max_chars":          "{n}자 이하여야 합니다.",
		"admin.rule.min_chars":          "설정한다면 {n}자 이상이어야 합니다.",
		"admin.rule.max_items":          "최대 {n}개까지 쓸 수 있습니다.",
		"admin.rule.one_of":             "다음 중 하나여야 합니다: {choices}.",
		"admin.rule.before_ends_at":     "종료 시각보다 앞서야 합니다.",
		"admin.rule.colour":             "#1a73e8이나 #fff 같은 색상이어야 합니다.",
		"admin.rule.required":           "필수 항목입니다.",
		"admin.rule.url_chars":          "공백, 제어 문자, 백슬래시를 쓸 수 없습니다.",
		"admin.rule.url":                "올바른 주소가 아닙니다.",
		"admin.rule.url_scheme":         "http:// 또는 https://로 시작해야 합니다.",
		"admin.rule.url_host":           "호스트가 있어야 합니다.",
		"admin.rule.url_user_info":      "사용자 이름이나 비밀번호를 넣을 수 없습니다.",
		"admin.rule.url_absolute":       "http(s)로 시작하는 전체 주소여야 합니다.",
		"admin.rule.url_or_path":        "http(s)로 시작하는 전체 주소 또는 /로 시작하는 경로여야 합니다.",
		"admin.rule.origin":             "오리진이어야 합니다: http(s)://호스트[:포트]",
		"admin.rule.origin_bare":        "경로, 쿼리, 와일드카드가 없는 오리진이어야 합니다: http(s)://호스트[:포트]",
		"admin.rule.origin_as_sent":     "브라우저가 쓰는 형태로 적어 주세요: {origin}",
		"admin.rule.adaptive_needed":    "활성화가 “자동 조절”이면 필요합니다.",
		"admin.rule.prometheus_url":     "Prometheus HTTP API의 기본 주소여야 합니다.",
		"admin.rule.needed_by_signal":   "이 신호에는 필요합니다.",
		"admin.rule.positive_by_signal": "이 신호에는 0보다 커야 합니다.",
		"admin.rule.positive":           "0보다 커야 합니다.",
		"admin.rule.below_open_at":      "0 이상이면서 “열기 기준”보다 작아야 합니다.",
		"admin.rule.abandon_after":      "{min}초 이상이면서 가장 긴 단계 주기({longest}ms)의 두 배 이상이어야 합니다.",
		"admin.rule.tiers_empty":        "단계가 하나 이상 있어야 합니다.",
		"admin.rule.tier_open_last":     "순번 상한은 마지막 단계에서만 비워 둘 수 있습니다.",
		"admin.rule.tier_ascending":     "앞 단계보다 커야 합니다.",
		"admin.rule.tier_last_open":     "마지막 단계는 순번 상한을 비워 두어야 합니다.",
		"admin.rule.text_or_langs":      "문구를 쓰거나 한 언어 이상의 문구를 써 주세요.",
		"admin.rule.lang":               "지원하지 않는 언어입니다.",
		"admin.rule.lang_empty":         "비워 둘 수 없습니다 (영어를 보여 주려면 이 언어를 빼 주세요).",
		"admin.rule.number":             "숫자여야 합니다.",
		"admin.rule.string":             "문자열이어야 합니다.",
		"admin.rule.bool":               "켜기 또는 끄기여야 합니다.",
		"admin.rule.list":               "목록이어야 합니다.",
		"admin.rule.object":             "설정 묶음이어야 합니다.",
		"admin.rule.type":               "값의 형식이 맞지 않습니다.",
		"admin.rule.local_text":         "문구 또는 언어별 문구여야 합니다.",
		"admin.rule.json":               "양식을 읽을 수 없습니다.",
		"admin.rule.json_empty":         "보낸 내용이 없습니다.",
		"admin.rule.one_object":         "양식을 읽을 수 없습니다.",
		"admin.rule.unknown_field":      "알 수 없는 설정입니다.",
		"admin.rule.empty_name":         "이름 없는 설정이 있습니다.",
		"admin.rule.datetime":           "2030-01-02 15:04 같은 UTC 날짜와 시각이어야 합니다.",
		"admin.rule.room_id":            "영문 소문자, 숫자, 하이픈으로 1~64자를 써 주세요.",
		"admin.rule.room_taken":         "같은 ID의 대기실이 이미 있습니다.",
		"admin.rule.at_tier":            "{n}번째 단계: {message}",
		"admin.rule.at_item":            "{n}번째 항목: {message}",
		"admin.rule.at_lang":            "{lang}: {message}",
		"admin.lang_name.en":            "영어",
		"admin.lang_name.ko":            "한국어",
		"admin.line.new":                "새 대기실: 측정값이 “열기 기준”에 이를 때까지 닫혀 있습니다.",
		"admin.line.opened":             "측정값 {reading}이 “열기 기준”({threshold})에 이르렀습니다.",
		"admin.line.closed":             "{windows}개 구간 연속으로 측정값이 “닫기 기준”({threshold}) 미만이었습니다. 마지막 측정값은 {reading}입니다.",
		"admin.line.signal_error":       "신호를 읽을 수 없어 대기열 상태를 그대로 유지합니다:",
		"admin.error.internal":          "서버에서 문제가 발생했습니다. 다시 시도해 주시고, 계속되면 서버 로그를 확인해 주세요.",
		"admin.error.bad_request":       "요청을 읽을 수 없습니다.",
		"admin.error.no_degrade":        "이 서버에는 비상 모드가 없습니다.",
		"admin.error.not_scheduled":     "예정된 오픈이 없어 열 것이 없습니다.",
		"admin.error.busy":              "서버가 바쁩니다. 잠시 후 다시 시도해 주세요.",
		"admin.error.http":              "서버가 상태 코드 {status}로 응답했습니다.",
		"admin.error.network":           "서버에 연결할 수 없습니다.",
		// 대기 방식, 매진, 대기열 가득 참 (issue 14).
		"draw.heading":                     "추첨 대기 중입니다",
		"draw.body":                        "이 판매는 추첨으로 입장합니다. 입장할 때마다 대기 중인 모든 사람 중에서 무작위로 뽑습니다. 대기 순번은 없습니다. 이 페이지를 열어 두시면 당첨될 때 입장시켜 드립니다.",
		"draw.paused":                      "입장이 잠시 중지되었습니다. 추첨 대상에서 빠지지 않습니다.",
		"soldout.heading":                  "매진되었습니다",
		"soldout.body":                     "죄송합니다. 모든 상품이 판매되었습니다.",
		"full.heading":                     "대기열이 가득 찼습니다",
		"full.body":                        "기다리는 사람이 너무 많아 지금은 더 받을 수 없습니다. 잠시 후 다시 시도해 주세요.",
		"full.retry.other":                 "{n}초 후 다시 시도합니다…",
		"full.again":                       "지금 다시 시도",
		"maintenance.heading":              "점검 중이라 대기실이 닫혀 있습니다",
		"maintenance.body":                 "지금은 대기열에 들어갈 수 없습니다. 나중에 다시 방문해 주세요. 다시 열리면 이 페이지가 자동으로 바뀝니다.",
		"admin.field.queueing_method":      "대기 방식",
		"admin.field.queueing_method.help": "무작위 추첨은 입장할 때마다 대기자 전체에서 뽑습니다. 통과는 모두 바로 입장시킵니다. 거부는 닫힘 페이지를 보여 줍니다(점검).",
		"admin.method.fifo":                "선착순",
		"admin.method.random":              "무작위 추첨",
		"admin.method.passthrough":         "통과 (대기열 없음)",
		"admin.method.reject":              "거부 (닫힘)",
		"admin.field.sold_out":             "매진",
		"admin.field.sold_out_message":     "매진 페이지 안내 문구",
		"admin.field.max_waiting":          "최대 대기 인원 (0: 제한 없음)",
		"admin.field.max_waiting.help":     "이를 넘으면 새 방문자에게 \"대기열이 가득 찼습니다\"가 표시되며, 대기 중인 사람은 자리를 유지합니다.",
		"admin.soldout.on":                 "매진 처리",
		"admin.soldout.off":                "매진 취소",
		"admin.soldout.state":              "매진: 대기 중인 모든 사람에게 매진 페이지가 표시됩니다.",
		// 쇼핑객 페이지: 추첨 중 연결 끊김, 주문 요청 페이지의 알 수 없는 요청 (issue 14).
		"draw.reconnecting":      "연결이 끊겼습니다. 다시 연결하는 중… 추첨 대상에서 빠지지 않으며, 아래 정보는 이전 정보라 최신이 아닐 수 있습니다.",
		"accept.unknown.heading": "요청을 찾을 수 없습니다",
		"accept.unknown.body":    "이 요청에 대한 기록이 없습니다. 링크가 잘못되었거나 다른 브라우저에서 보낸 요청일 수 있습니다.",
		"accept.unknown.again":   "새로 요청하기",

		// "내 차례가 되면 알려 주세요" (web/notify.ts), 대기가 길 때 표시.
		"notify.button":  "내 차례가 되면 알려 주세요",
		"notify.on":      "켜짐: 차례가 되면 이 브라우저가 알림을 보여 드립니다. 이 탭이 뒤에 있어도 됩니다. 탭을 닫지 마세요.",
		"notify.off":     "꺼짐: 알림을 보내지 않습니다. 차례가 되면 이 탭의 제목은 여전히 바뀝니다.",
		"notify.blocked": "이 브라우저에서 이 페이지의 알림이 차단되어 있습니다. 탭을 열어 두세요. 차례가 되면 탭의 제목이 바뀝니다.",
		"notify.body":    "\"{title}\" 대기열에서 고객님 차례가 시작되었습니다. 해당 탭으로 돌아가 쇼핑을 계속하세요.",
		// 방 설정 양식의 날짜 입력 아래: UTC 값을 운영자 시간대로.
		"admin.field.local_time": "내 시간대 기준: {time}",
	},
}

// clientKeys are the strings web/waiting.ts reads (its KEYS list); only these
// go into the page, to keep it small.
var clientKeys = []string{
	"waiting.ahead.zero", "waiting.ahead.one", "waiting.ahead.other",
	"waiting.total.one", "waiting.total.other",
	"eta.unknown", "eta.paused", "eta.under_minute",
	"eta.minutes.one", "eta.minutes.other", "eta.hours.one", "eta.hours.other",
	"eta.range_minutes", "eta.range_hours",
	"conn.connecting", "conn.ws", "conn.sse", "conn.poll", "conn.reconnecting",
	"admitted.countdown.one", "admitted.countdown.other", "admitted.now", "admitted.heading",
	"notify.on", "notify.off", "notify.blocked", "notify.body",
	"checking.body", "checking.failed", "checking.longer", "embed.joining",
	"leave.failed",
	"accept.status.accepted", "accept.status.published", "accept.status.processed", "accept.status.rejected",
	"accept.reason.sold_out", "accept.recovered",
	"full.retry.one", "full.retry.other",
	"scheduled.body", "scheduled.countdown", "scheduled.drawing",
	"expired.heading", "expired.body", "expired.no_show.heading", "expired.no_show.body",
	"expired.idle.heading", "expired.idle.body",
}

// InCatalogue reports whether s is one of lang's catalogue strings, such as
// a message a handler took from T: a page can show it as it is.
func InCatalogue(lang Lang, s string) bool {
	for _, v := range catalogue[lang] {
		if v == s {
			return true
		}
	}
	return false
}

// ParseLang returns the supported language a tag names ("ko", "ko-KR",
// "EN-gb"), or false.
func ParseLang(tag string) (Lang, bool) {
	base, _, _ := strings.Cut(strings.TrimSpace(tag), "-")
	base, _, _ = strings.Cut(base, "_")
	l := Lang(strings.ToLower(base))
	if _, ok := catalogue[l]; ok {
		return l, true
	}
	return "", false
}

// Negotiate picks the page language: a supported ?lang= override wins, then
// the Accept-Language entry with the highest q-value that we have (earlier
// entries win ties), then English.
func Negotiate(acceptLanguage, override string) Lang {
	if l, ok := ParseLang(override); ok {
		return l
	}
	best, bestQ := English, 0.0
	for _, part := range strings.Split(acceptLanguage, ",") {
		tag, params, _ := strings.Cut(part, ";")
		q := 1.0
		for _, p := range strings.Split(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0 // a malformed weight must not outrank good ones
				}
				q = f
			}
		}
		if q <= bestQ {
			continue
		}
		if strings.TrimSpace(tag) == "*" {
			best, bestQ = English, q
			continue
		}
		if l, ok := ParseLang(tag); ok {
			best, bestQ = l, q
		}
	}
	return best
}

// T returns the string for key in lang, falling back to English, then to
// the key itself so a missing string shows up instead of a blank.
func T(lang Lang, key string) string {
	if s, ok := catalogue[lang][key]; ok {
		return s
	}
	if s, ok := catalogue[English][key]; ok {
		return s
	}
	return key
}

// pluralKey picks base.zero for 0 and base.one for 1 when lang has them,
// else base.other: enough for English and Korean (which has no plural).
// web/strings.ts plural() follows the same rule.
func pluralKey(lang Lang, base string, n int64) string {
	m := catalogue[lang]
	if n == 0 {
		if _, ok := m[base+".zero"]; ok {
			return base + ".zero"
		}
	}
	if n == 1 {
		if _, ok := m[base+".one"]; ok {
			return base + ".one"
		}
	}
	return base + ".other"
}

// Tn returns the plural form of base for n with the number put in for {n}.
func Tn(lang Lang, base string, n int64) string {
	return strings.Replace(T(lang, pluralKey(lang, base, n)), "{n}", FormatNumber(lang, n), 1)
}

// printers are made once: a Printer only reads its fields, so it is safe to share.
var printers = func() map[Lang]*message.Printer {
	m := make(map[Lang]*message.Printer, len(Langs))
	for _, l := range Langs {
		m[l] = message.NewPrinter(language.MustParse(string(l)))
	}
	return m
}()

// FormatNumber groups digits as lang does (1,234,567 in both English and Korean).
func FormatNumber(lang Lang, n int64) string {
	p, ok := printers[lang]
	if !ok {
		p = printers[English]
	}
	return p.Sprintf("%d", n)
}

// DurationWords says a set length of time exactly, in its largest whole
// unit: "5 minutes", "90 seconds", "2 hours".
func DurationWords(lang Lang, d time.Duration) string {
	s := int64(d / time.Second)
	switch {
	case s >= 3600 && s%3600 == 0:
		return Tn(lang, "duration.hours", s/3600)
	case s >= 60 && s%60 == 0:
		return Tn(lang, "duration.minutes", s/60)
	}
	return Tn(lang, "duration.seconds", s)
}

// ETAWords says a wait in plain words: "less than a minute", "about 3
// minutes", "about 2 hours". Negative means no estimate yet. The client's
// etaWords in web/format.ts rounds the same way.
func ETAWords(lang Lang, seconds int64) string {
	switch {
	case seconds < 0:
		return T(lang, "eta.unknown")
	case seconds < 60:
		return T(lang, "eta.under_minute")
	}
	// Round half up, as JavaScript's Math.round does for positive numbers.
	if minutes := max((seconds+30)/60, 1); minutes < 60 {
		return Tn(lang, "eta.minutes", minutes)
	}
	return Tn(lang, "eta.hours", max((seconds+1800)/3600, 1))
}

// ETARangeWords says an estimate with its range (queue.Estimate) in plain
// words: "less than a minute" only when even the high end is, "about 3–5
// minutes" when the ends round to different minutes, else as ETAWords says
// the point. A negative low or high (no range) says the point alone. The
// client's etaRangeWords in web/format.ts rounds the same way.
func ETARangeWords(lang Lang, low, point, high int64) string {
	if point < 0 || low < 0 || high < 0 {
		return ETAWords(lang, point)
	}
	low, high = min(low, point), max(high, point)
	if high < 60 {
		return T(lang, "eta.under_minute")
	}
	// Rounded half up, as ETAWords; the ends never cross.
	lo, hi, key, single := max((low+30)/60, 1), (high+30)/60, "eta.range_minutes", "eta.minutes"
	if hi >= 60 {
		lo, hi, key, single = max((low+1800)/3600, 1), (high+1800)/3600, "eta.range_hours", "eta.hours"
	}
	if hi <= lo {
		return Tn(lang, single, lo)
	}
	return strings.NewReplacer("{lo}", FormatNumber(lang, lo), "{hi}", FormatNumber(lang, hi)).Replace(T(lang, key))
}

// ClientStrings returns the strings the waiting page script needs, for
// rendering into the page as JSON.
func ClientStrings(lang Lang) map[string]string {
	out := make(map[string]string, len(clientKeys))
	for _, k := range clientKeys {
		if s, ok := catalogue[lang][k]; ok {
			out[k] = s
		} else if !isPluralForm(k) {
			out[k] = T(lang, k)
		}
		// A missing .zero or .one is left out on purpose: Korean uses
		// .other for every number, and so does the client's plural().
	}
	return out
}

func isPluralForm(key string) bool {
	return strings.HasSuffix(key, ".zero") || strings.HasSuffix(key, ".one")
}

// CountdownClock is a countdown as h:mm:ss (m:ss under an hour), the same
// as the client's countdownClock in web/format.ts.
func CountdownClock(seconds int64) string {
	seconds = max(seconds, 0)
	h, m, sec := seconds/3600, seconds/60%60, seconds%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, sec)
	}
	return fmt.Sprintf("%d:%02d", m, sec)
}

// FormatHourMinute is FormatClock without seconds, for the time of entry.
func FormatHourMinute(lang Lang, t time.Time) string {
	t = t.UTC()
	if lang == Korean {
		half := "오전"
		if t.Hour() >= 12 {
			half = "오후"
		}
		return half + " " + t.Format("3:04") + " UTC"
	}
	return t.Format("3:04 PM") + " UTC"
}

// FormatMoment is FormatHourMinute with the UTC date in front when t is not
// on now's UTC day: "Fri, Dec 4, 7:19 PM UTC", "12월 4일 (금) 오후 7:19 UTC".
// web/format.ts's formatMoment says the same in the visitor's zone.
func FormatMoment(lang Lang, t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.YearDay() == now.YearDay() && t.Year() == now.Year() {
		return FormatHourMinute(lang, t)
	}
	if lang == Korean {
		days := [...]string{"일", "월", "화", "수", "목", "금", "토"}
		return fmt.Sprintf("%d월 %d일 (%s) %s", t.Month(), t.Day(), days[t.Weekday()], FormatHourMinute(lang, t))
	}
	return t.Format("Mon, Jan 2, ") + FormatHourMinute(lang, t)
}

// FormatClock shows a time of day for a page rendered on the server, which
// does not know the visitor's time zone: so UTC, and said so. The script
// rewrites it in local time on its first update.
func FormatClock(lang Lang, t time.Time) string {
	t = t.UTC()
	if lang == Korean {
		half := "오전"
		if t.Hour() >= 12 {
			half = "오후"
		}
		return half + " " + t.Format("3:04:05") + " UTC"
	}
	return t.Format("3:04:05 PM") + " UTC"
}
