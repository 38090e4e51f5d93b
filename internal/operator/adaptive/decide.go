package adaptive

import (
	"fmt"
	"strconv"
	"time"

	"github.com/waitroom/waitroom/queue"
)

// reasonNew is the state of a room before its first reading: closed, so a
// new room admits at once until checkout is shown to be busy.
const reasonNew = "new room: closed until a reading reaches open_at"

// decide applies one window's reading, or failed read, to st and reports
// whether the line opened or closed. Closed opens at the first reading at or
// above open_at; open closes after windows_to_close readings in a row below
// close_at. A failed read keeps the state, says so, and breaks the run of low
// readings: the line closes only on readings that were actually seen.
func decide(st State, a queue.Adaptive, reading float64, readErr error, now time.Time) (State, bool) {
	if st.Since.IsZero() {
		st.Since, st.Reason, st.Why = now, reasonNew, Why{Cause: CauseNew}
	}
	if readErr != nil {
		st.SignalError = "signal unavailable: " + readErr.Error()
		st.Below = 0
		return st, false
	}
	st.SignalError = ""
	st.Reading, st.ReadAt = &reading, now
	if !st.Open {
		if reading < a.OpenAt {
			return st, false
		}
		st.Open, st.Since, st.Below = true, now, 0
		st.Reason = fmt.Sprintf("reading %s reached open_at %s", num(reading), num(a.OpenAt))
		st.Why = Why{Cause: CauseOpened, Reading: reading, Threshold: a.OpenAt}
		st.Transitions++
		return st, true
	}
	if reading >= a.CloseAt {
		st.Below = 0
		return st, false
	}
	st.Below++
	if st.Below < windowsToClose(a) {
		return st, false
	}
	st.Reason = fmt.Sprintf("%d windows in a row below close_at %s, last reading %s", st.Below, num(a.CloseAt), num(reading))
	st.Why = Why{Cause: CauseClosed, Reading: reading, Threshold: a.CloseAt, Windows: st.Below}
	st.Open, st.Since, st.Below = false, now, 0
	st.Transitions++
	return st, true
}

func windowsToClose(a queue.Adaptive) int64 {
	if a.WindowsToClose < 1 {
		return 1
	}
	return a.WindowsToClose
}

func num(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
