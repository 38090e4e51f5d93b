package templates

import (
	"strings"
	"time"
)

// AdminOpening is a room's scheduled opening on its dashboard page: when,
// how many wait in the pre-queue, and the record of the last draw.
type AdminOpening struct {
	OpensAt   time.Time
	Ahead     bool // the opening is still ahead: "open now" applies
	Scheduled int64
	Draw      *AdminDraw
}

// AdminDraw is the audit record of a draw (queue.DrawRecord).
type AdminDraw struct {
	At        time.Time
	Drawn     int64
	Server    string
	OrderHash string
}

// adminAtParts splits a sentence at its {at}, where a <time> goes.
func adminAtParts(s string) (before, after string) {
	before, after, _ = strings.Cut(s, "{at}")
	return before, after
}

// adminTime is a time on the dashboard: UTC, to the second.
func adminTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") + " UTC" }
