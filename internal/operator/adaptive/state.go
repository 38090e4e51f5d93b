package adaptive

import (
	"strconv"
	"time"
)

// State is a room's activation as every server sees it: kept in Redis,
// cached in memory by each server.
type State struct {
	Open bool `json:"open"`
	// Since is when the line last opened or closed (or the state began).
	Since time.Time `json:"since"`
	// Reason says why the line is open or closed, with the reading that did it.
	Reason string `json:"reason"`
	// Why is Reason without words, for pages in other languages.
	Why Why `json:"why"`
	// Reading is the last good reading; nil before the first.
	Reading *float64  `json:"reading"`
	ReadAt  time.Time `json:"read_at"`
	// SignalError is "signal unavailable: …" while the last read failed; the
	// state then stays as it was.
	SignalError string `json:"signal_error,omitempty"`
	// Below counts consecutive windows below close_at while open.
	Below       int64     `json:"below"`
	Transitions int64     `json:"transitions"`
	EvaluatedAt time.Time `json:"evaluated_at"`
}

// Why the line is open or closed, as Why.Cause.
const (
	CauseNew    = "new"    // no reading has reached open_at yet
	CauseOpened = "opened" // Reading reached Threshold (open_at)
	CauseClosed = "closed" // Windows in a row below Threshold (close_at), the last Reading
)

// Why is a State's Reason as a cause and its figures; a state written
// before causes were kept has none ("").
type Why struct {
	Cause     string  `json:"cause"`
	Reading   float64 `json:"reading"`
	Threshold float64 `json:"threshold"`
	Windows   int64   `json:"windows"`
}

// Hash fields of <prefix>{room}:activation.
const (
	fOpen        = "open"
	fSince       = "since"
	fReason      = "reason"
	fReading     = "reading"
	fReadAt      = "read_at"
	fSignalError = "signal_error"
	fBelow       = "below"
	fTransitions = "transitions"
	fEvaluatedAt = "evaluated_at" // written by the claim script only
	fCause       = "cause"
	fCauseRead   = "cause_reading"
	fCauseLimit  = "cause_threshold"
	fCauseWins   = "cause_windows"
)

// fields encodes s for HSET, all but evaluated_at; times are unix ms.
func (s State) fields() []any {
	reading := ""
	if s.Reading != nil {
		reading = strconv.FormatFloat(*s.Reading, 'g', -1, 64)
	}
	open := "0"
	if s.Open {
		open = "1"
	}
	return []any{
		fOpen, open, fSince, msOf(s.Since), fReason, s.Reason, fReading, reading,
		fReadAt, msOf(s.ReadAt), fSignalError, s.SignalError,
		fBelow, s.Below, fTransitions, s.Transitions,
		fCause, s.Why.Cause, fCauseRead, strconv.FormatFloat(s.Why.Reading, 'g', -1, 64),
		fCauseLimit, strconv.FormatFloat(s.Why.Threshold, 'g', -1, 64), fCauseWins, s.Why.Windows,
	}
}

// decodeState reads the hash; missing or bad fields read as zero, so an
// empty hash is a room not evaluated yet.
func decodeState(h map[string]string) State {
	num := func(f string) int64 { n, _ := strconv.ParseInt(h[f], 10, 64); return n }
	s := State{
		Open:        h[fOpen] == "1",
		Since:       timeOf(num(fSince)),
		Reason:      h[fReason],
		ReadAt:      timeOf(num(fReadAt)),
		SignalError: h[fSignalError],
		Below:       num(fBelow),
		Transitions: num(fTransitions),
		EvaluatedAt: timeOf(num(fEvaluatedAt)),
	}
	if v, err := strconv.ParseFloat(h[fReading], 64); err == nil {
		s.Reading = &v
	}
	s.Why.Cause = h[fCause]
	s.Why.Reading, _ = strconv.ParseFloat(h[fCauseRead], 64)
	s.Why.Threshold, _ = strconv.ParseFloat(h[fCauseLimit], 64)
	s.Why.Windows = num(fCauseWins)
	return s
}

func msOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func timeOf(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
