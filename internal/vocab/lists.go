package vocab

// The vocabulary's words in lists, for the generated Lua and TypeScript
// tables (gen) and the tests that keep them complete.
var (
	States = []State{StateWaiting, StateScheduled, StateAdmitted, StateExpired, StateClosed,
		StateBypassed, StateSoldOut, StateFull, StateOrdered}
	// Reasons are why a ticket ended (expired) or reads closed.
	Reasons = []string{ReasonAbandoned, ReasonReclaimed, ReasonCompleted, ReasonLeft,
		ReasonNoShow, ReasonIdle, ReasonEnded, ReasonMaintenance}
	Displays = []Display{DisplayScheduled, DisplayWaiting, DisplayAdmitted, DisplayExpired,
		DisplayClosed, DisplayBypassed, DisplaySoldOut, DisplayFull, DisplayOrdered,
		DisplayDraw, DisplayMaintenance, DisplayLeft, DisplayChecking}
	Methods    = []Method{MethodFIFO, MethodRandom, MethodPassthrough, MethodReject}
	Admissions = []Admission{AdmitLine, AdmitClosed, AdmitOpen, AdmitOpenIfEmpty, AdmitPaused, AdmitScheduled}
)
