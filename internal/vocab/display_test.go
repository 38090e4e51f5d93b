package vocab

import "testing"

// TestDisplayOf is the page's rule: a random line's waiter is in the draw, a
// rejecting room's ticket is closed for maintenance, any other shows its
// state.
func TestDisplayOf(t *testing.T) {
	for _, c := range []struct {
		st     State
		method Method
		reason string
		want   Display
	}{
		{StateWaiting, MethodRandom, "", DisplayDraw},
		{StateWaiting, MethodFIFO, "", DisplayWaiting},
		{StateWaiting, "", "", DisplayWaiting},
		{StateClosed, MethodReject, ReasonMaintenance, DisplayMaintenance},
		{StateClosed, MethodFIFO, ReasonEnded, DisplayClosed},
		{StateAdmitted, MethodRandom, "", DisplayAdmitted},
		{StateSoldOut, MethodFIFO, "", DisplaySoldOut},
		{StateExpired, MethodFIFO, ReasonNoShow, DisplayExpired},
	} {
		if got := DisplayOf(c.st, c.method, c.reason); got != c.want {
			t.Errorf("DisplayOf(%s, %s, %q) = %s, want %s", c.st, c.method, c.reason, got, c.want)
		}
	}
}

// TestEveryStateIsADisplay: the page has a block for every state.
func TestEveryStateIsADisplay(t *testing.T) {
	for _, s := range States {
		found := false
		for _, d := range Displays {
			found = found || string(d) == string(s)
		}
		if !found {
			t.Errorf("state %s has no display state", s)
		}
	}
}
