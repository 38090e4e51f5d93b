package vocab

// Display is what the waiting page shows for a ticket: the block of its
// state, or one of the page's own variants. The API and push messages carry
// it (queue.View's display), so the page's rule is DisplayOf alone.
type Display string

// Display states: one per state the page shows, and the page's own.
const (
	DisplayScheduled Display = "scheduled"
	DisplayWaiting   Display = "waiting"
	DisplayAdmitted  Display = "admitted"
	DisplayExpired   Display = "expired"
	DisplayClosed    Display = "closed"
	DisplayBypassed  Display = "bypassed"
	DisplaySoldOut   Display = "sold_out"
	DisplayFull      Display = "full"
	DisplayOrdered   Display = "ordered"
	// DisplayDraw: waiting in a random line, with no place: a draw.
	DisplayDraw Display = "draw"
	// DisplayMaintenance: closed because the room rejects everyone.
	DisplayMaintenance Display = "maintenance"
	// DisplayLeft: the visitor gave the place up on this page (the page's
	// own: no ticket is left in this state on the server).
	DisplayLeft Display = "left"
	// DisplayChecking: no place yet, the browser is solving the room's
	// proof-of-work challenge before it enters (the page's own).
	DisplayChecking Display = "checking"
)

// DisplayOf is the display state of a ticket in state st, in a line that
// admits by method, closed or ended for reason.
func DisplayOf(st State, method Method, reason string) Display {
	switch {
	case st == StateWaiting && method == MethodRandom:
		return DisplayDraw
	case st == StateClosed && reason == ReasonMaintenance:
		return DisplayMaintenance
	}
	return Display(st)
}
