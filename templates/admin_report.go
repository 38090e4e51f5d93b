package templates

import (
	"net/url"
	"strconv"
	"time"
)

// rangeMode is the charts' mode for the script: live (15 minutes, pushed)
// or range (minutes of the sale's history, fixed).
func rangeMode(r *AdminRange) string {
	if r == nil {
		return "live"
	}
	return "range"
}

// chartKey is a chart's caption: "…, last 15 minutes" live, per minute
// over a range.
func chartKey(key string, r *AdminRange) string {
	if r == nil {
		return key
	}
	return key + "_range"
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// utc is a time as shown without script: the browser's zone replaces it
// (data-local-time), UTC staying on hover.
func utc(t time.Time) string { return t.UTC().Format("2006-01-02 15:04") + " UTC" }

func count(n int64) string { return strconv.FormatInt(n, 10) }

func secs(lang Lang, v *float64) string {
	if v == nil {
		return "–"
	}
	if *v >= 120 {
		return withPlaceholders(T(lang, "admin.unit.min"), "n", strconv.FormatFloat(*v/60, 'f', 1, 64))
	}
	return withPlaceholders(T(lang, "admin.unit.s"), "n", strconv.FormatFloat(*v, 'f', 1, 64))
}

func pct(v *float64) string {
	if v == nil {
		return "–"
	}
	return strconv.FormatFloat(*v*100, 'f', 1, 64) + " %"
}

// reportLink is the report's download in format, over the same range.
func reportLink(p AdminReportProps, format string) string {
	q := url.Values{"format": {format}, "from": {rfc(p.Summary.From)}, "to": {rfc(p.Summary.To)}}
	return AdminRoomPath(p.Room, "/report") + "?" + q.Encode()
}
