package redisstore

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// One Lua script per operation; go-redis runs them with EVALSHA and falls
// back to EVAL when the server does not have them cached yet. Scripts that
// read or write ticket records start with the record codec (lua/record.lua).
var (
	//go:embed lua/record.lua
	recordLua string

	//go:embed lua/enter.lua
	enterLua    string
	enterScript = redis.NewScript(recordLua + enterLua)

	//go:embed lua/status.lua
	statusLua    string
	statusScript = redis.NewScript(recordLua + statusLua)

	//go:embed lua/tick.lua
	tickLua    string
	tickScript = redis.NewScript(recordLua + tickLua)

	//go:embed lua/leave.lua
	leaveLua    string
	leaveScript = redis.NewScript(recordLua + leaveLua)

	//go:embed lua/complete.lua
	completeLua    string
	completeScript = redis.NewScript(recordLua + completeLua)

	//go:embed lua/restore.lua
	restoreLua    string
	restoreScript = redis.NewScript(restoreLua)

	//go:embed lua/hold.lua
	holdLua    string
	holdScript = redis.NewScript(recordLua + holdLua)

	//go:embed lua/places.lua
	placesLua    string
	placesScript = redis.NewScript(recordLua + placesLua)

	//go:embed lua/draw.lua
	drawLua    string
	drawScript = redis.NewScript(recordLua + drawLua)

	//go:embed lua/active.lua
	activeLua    string
	activeScript = redis.NewScript(recordLua + activeLua)

	//go:embed lua/alive.lua
	aliveLua    string
	aliveScript = redis.NewScript(recordLua + aliveLua)

	//go:embed lua/present.lua
	presentLua    string
	presentScript = redis.NewScript(presentLua)

	//go:embed lua/lease.lua
	leaseLua    string
	leaseScript = redis.NewScript(leaseLua)
)
