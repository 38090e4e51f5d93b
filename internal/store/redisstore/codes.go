package redisstore

import (
	"fmt"
	"strings"

	"github.com/waitroom/waitroom/internal/vocab"
	"github.com/waitroom/waitroom/queue"
)

// code is a script's answer that is no value but a refusal or an absence.
// Each is named once here: codesLua writes them into every script as Lua
// locals (CODE_PROOF_NEEDED, ...), and what each means to the line is
// mapped here (enterRefusal, drawAnswer).
type code int64

const (
	codeUnranked    code = -1 // enter, status: the ticket has no rank (not waiting)
	codeProofNeeded code = -2 // enter: a new place costs a proof of work and none came
	codeProofSpent  code = -3 // enter: the proof was spent before
	codeLineFull    code = -4 // enter: the line holds max_waiting
	codePlacesFull  code = -1 // places: the bucket holds its limit of places
	codeDrawStale   code = -1 // draw: the order is not the pre-queue's
)

// codes are the codes by their Lua names.
var codes = []struct {
	lua string
	c   code
}{
	{"CODE_UNRANKED", codeUnranked},
	{"CODE_PROOF_NEEDED", codeProofNeeded},
	{"CODE_PROOF_SPENT", codeProofSpent},
	{"CODE_LINE_FULL", codeLineFull},
	{"CODE_PLACES_FULL", codePlacesFull},
	{"CODE_DRAW_STALE", codeDrawStale},
}

// codesLua declares the codes for the scripts: prepended to each, after
// the vocabulary.
var codesLua = func() string {
	var b strings.Builder
	b.WriteString("-- codes: scripts' refusals (redisstore/codes.go)\n")
	for _, c := range codes {
		fmt.Fprintf(&b, "local %s = %d\n", c.lua, c.c)
	}
	return b.String()
}()

// enterRefusal is what an enter that gave no ticket means, by the rank
// enter.lua answered with: an error, or the ticket to show.
func enterRefusal(room string, rank int64) (queue.Ticket, error) {
	switch code(rank) {
	case codeProofNeeded:
		return queue.Ticket{}, queue.ErrProofRequired
	case codeProofSpent:
		return queue.Ticket{}, queue.ErrProofSpent
	case codeLineFull:
		return queue.Ticket{Room: room, State: vocab.StateFull}, nil
	}
	return queue.Ticket{Room: room, State: vocab.StateClosed}, nil
}
