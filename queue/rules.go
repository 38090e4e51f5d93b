package queue

import (
	"time"

	"github.com/waitroom/waitroom/internal/vocab"
)

// Rules of the line that every store applies alike.

// MaxScan bounds each kind of removal one tick makes (ended tickets purged,
// expired slots reclaimed, abandoned waiters dropped, ghosts popped at the
// head), so a tick stays short however many ghosts piled up.
const MaxScan = 500

// SweepKeep bounds the waiters with a recent sign of life that one tick's
// abandon sweep looks at (the silent it drops count against MaxScan): the
// sweep walks the line round-robin from the tick before, so a silent waiter
// in a line of n is dropped within about n / SweepKeep ticks after
// abandon_after_s (never before); the head is checked exactly as it is
// admitted. Stores keep no index by last sign of life (it cost ~100 B a
// waiter), so this is what a tick spends on it.
const SweepKeep = 128

// EndedKept is how long an ended ticket (completed, left, abandoned or
// reclaimed) stays in the store so its owner can still read why it ended;
// then a tick deletes it, and its visitor's entry, so the line's memory
// follows the live tickets, not every ticket there ever was.
const EndedKept = 5 * time.Minute

// Admission is how one enter is admitted (internal/vocab defines the modes).
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
	case s.Closed(now) || s.Frozen():
		return AdmitClosed // Ticket.Show says why
	case s.Scheduled(now):
		// Before the opening nobody is let in, whatever the activation: the
		// pre-queue is drawn at the opening, so an early press gains nothing.
		return AdmitScheduled
	case s.Activation == ActivationOff || s.QueueingMethod == MethodPassthrough:
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

// Why a ticket reads closed (Ticket.Reason): internal/vocab's words.
const (
	ReasonEnded       = vocab.ReasonEnded
	ReasonMaintenance = vocab.ReasonMaintenance
)

// FullRetryAfter is when a newcomer turned away by a full line should try
// again: long enough that a full line is not hammered, short enough that
// places freed by admissions are taken.
const FullRetryAfter = 15 * time.Second

// Frozen reports whether the line stands still: the sale is sold out, or the
// room rejects everyone. Nobody takes a place, is admitted or is dropped, so
// undoing it puts the line back as it was; admitted visitors keep their slots.
func (s *Settings) Frozen() bool { return s.SoldOut || s.QueueingMethod == MethodReject }

// Ranked reports whether a waiter's position means anything: not in a random
// line, where every admission is a draw among everyone waiting.
func (s *Settings) Ranked() bool { return s.QueueingMethod != MethodRandom }

// ticking is what a tick runs with: a frozen line admits nobody and drops
// nobody, since its pages show no place to keep alive.
func (s Settings) ticking() Settings {
	if s.Frozen() {
		s.Paused, s.AbandonAfterS = true, neverAbandon
	}
	return s
}

// Show applies the room's state to a ticket as the store read it: while the
// line is frozen a waiter keeps its place in the store but reads as sold out,
// or closed for maintenance, as a newcomer turned away does.
func (t *Ticket) Show(s *Settings) {
	away := t.State == vocab.StateWaiting || t.State == vocab.StateClosed
	switch {
	case s.SoldOut && away:
		t.State, t.Reason, t.Position = vocab.StateSoldOut, "", 0
	case s.QueueingMethod == MethodReject && away:
		t.State, t.Reason, t.Position = vocab.StateClosed, ReasonMaintenance, 0
	case t.State == vocab.StateClosed:
		t.Reason = ReasonEnded
	}
}
