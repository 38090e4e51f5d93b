package queue

import (
	"time"

	"github.com/waitroom/waitroom/queue/vocab"
)

// Rules of the line that every store applies alike.

// MaxScan bounds each kind of removal one tick makes (ended tickets purged,
// expired slots reclaimed, abandoned waiters dropped, ghosts popped at the
// head), so a tick stays short however many ghosts piled up.
const MaxScan = 500

// EndedKept is how long an ended ticket (completed, left, abandoned or
// reclaimed) stays in the store so its owner can still read why it ended;
// then a tick deletes it, and its visitor's entry, so the line's memory
// follows the live tickets, not every ticket there ever was.
const EndedKept = 5 * time.Minute

// Admission is how one enter is admitted (queue/vocab defines the modes).
type Admission = vocab.Admission

// Admission modes.
const (
	AdmitLine        = vocab.AdmitLine
	AdmitClosed      = vocab.AdmitClosed
	AdmitOpen        = vocab.AdmitOpen
	AdmitOpenIfEmpty = vocab.AdmitOpenIfEmpty
	AdmitPaused      = vocab.AdmitPaused
	AdmitScheduled   = vocab.AdmitScheduled
)

// AdmissionOf decides how an enter into a room with settings s is admitted
// at now; lineOpen is whether an adaptive room's line is open.
func AdmissionOf(s *Settings, now time.Time, lineOpen bool) Admission {
	switch {
	case s.Closed(now):
		return AdmitClosed
	case s.Scheduled(now):
		// Before the opening nobody is let in, whatever the activation: the
		// pre-queue is drawn at the opening, so an early press gains nothing.
		return AdmitScheduled
	case s.Activation == ActivationOff:
		return AdmitOpen
	case s.Activation == ActivationAdaptive && !lineOpen:
		// The line is closed while checkout is cool: admit at once, with
		// capacity still counted and a token still issued; but never ahead
		// of people still waiting from when it was open.
		return AdmitOpenIfEmpty
	case s.Paused:
		return AdmitPaused
	}
	return AdmitLine
}
