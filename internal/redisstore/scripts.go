package redisstore

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// One Lua script per operation; go-redis runs them with EVALSHA and falls
// back to EVAL when the server does not have them cached yet.
var (
	//go:embed lua/enter.lua
	enterLua    string
	enterScript = redis.NewScript(enterLua)

	//go:embed lua/status.lua
	statusLua    string
	statusScript = redis.NewScript(statusLua)

	//go:embed lua/tick.lua
	tickLua    string
	tickScript = redis.NewScript(tickLua)

	//go:embed lua/leave.lua
	leaveLua    string
	leaveScript = redis.NewScript(leaveLua)

	//go:embed lua/complete.lua
	completeLua    string
	completeScript = redis.NewScript(completeLua)

	//go:embed lua/restore.lua
	restoreLua    string
	restoreScript = redis.NewScript(restoreLua)

	//go:embed lua/hold.lua
	holdLua    string
	holdScript = redis.NewScript(holdLua)

	//go:embed lua/places.lua
	placesLua    string
	placesScript = redis.NewScript(placesLua)

	//go:embed lua/draw.lua
	drawLua    string
	drawScript = redis.NewScript(drawLua)

	//go:embed lua/active.lua
	activeLua    string
	activeScript = redis.NewScript(activeLua)

	//go:embed lua/lease.lua
	leaseLua    string
	leaseScript = redis.NewScript(leaseLua)
)
