package redisstore

import (
	_ "embed"
)

// One Lua script per operation. The store runs each as a function of this
// release's library where Redis has functions, else with EVALSHA (falling
// back to EVAL when the server does not have it cached yet): functions.go.
// Every script starts with the vocabulary (lua/vocab.lua, generated from
// internal/vocab); scripts that read or write ticket records then with the
// record codec (lua/record.lua).
var (
	//go:embed lua/vocab.lua
	vocabLua string

	//go:embed lua/record.lua
	recordLua string

	//go:embed lua/enter.lua
	enterLua    string
	enterScript = newScript("enter", enterLua, true)

	//go:embed lua/status.lua
	statusLua    string
	statusScript = newScript("status", statusLua, true)

	//go:embed lua/tick.lua
	tickLua    string
	tickScript = newScript("tick", tickLua, true)

	//go:embed lua/leave.lua
	leaveLua    string
	leaveScript = newScript("leave", leaveLua, true)

	//go:embed lua/complete.lua
	completeLua    string
	completeScript = newScript("complete", completeLua, true)

	//go:embed lua/restore.lua
	restoreLua    string
	restoreScript = newScript("restore", restoreLua, false)

	//go:embed lua/renew.lua
	renewLua    string
	renewScript = newScript("renew", renewLua, false)

	//go:embed lua/hold.lua
	holdLua    string
	holdScript = newScript("hold", holdLua, true)

	//go:embed lua/handoff.lua
	handoffLua    string
	handoffScript = newScript("handoff", handoffLua, false)

	//go:embed lua/places.lua
	placesLua    string
	placesScript = newScript("places", placesLua, true)

	//go:embed lua/held.lua
	heldLua    string
	heldScript = newScript("held", heldLua, true)

	//go:embed lua/draw.lua
	drawLua    string
	drawScript = newScript("draw", drawLua, true)

	//go:embed lua/active.lua
	activeLua    string
	activeScript = newScript("active", activeLua, true)

	//go:embed lua/arrive.lua
	arriveLua    string
	arriveScript = newScript("arrive", arriveLua, true)

	//go:embed lua/alive.lua
	aliveLua    string
	aliveScript = newScript("alive", aliveLua, true)

	//go:embed lua/present.lua
	presentLua    string
	presentScript = newScript("present", presentLua, false)

	//go:embed lua/retire.lua
	retireLua    string
	retireScript = newScript("retire", retireLua, true)

	//go:embed lua/lease.lua
	leaseLua    string
	leaseScript = newScript("lease", leaseLua, false)
)
