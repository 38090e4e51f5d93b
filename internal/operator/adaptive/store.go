package adaptive

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/waitroom/waitroom/internal/store/redisstore"
)

// stateTTL keeps a room's activation while anyone evaluates it. DeleteRoom
// removes it with the room (redisstore lists the key); the TTL is for a
// state written back by a window evaluated while the room was deleted.
const stateTTL = 24 * time.Hour

var (
	//go:embed lua/claim.lua
	claimLua    string
	claimScript = redis.NewScript(claimLua)

	//go:embed lua/write.lua
	writeLua    string
	writeScript = redis.NewScript(writeLua)
)

// redisStates keeps each room's State in the hash redisstore.ActivationKey
// names, in the room's Redis Cluster slot.
type redisStates struct {
	rdb    redis.UniversalClient
	prefix string
}

func (r redisStates) key(room string) string { return redisstore.ActivationKey(r.prefix, room) }

// claim returns the stored state and whether this server evaluates the
// window now: the first server to ask once gap has passed since the last
// evaluation wins, so N servers still read the signal once per window.
func (r redisStates) claim(ctx context.Context, room string, now time.Time, gap time.Duration) (State, bool, error) {
	res, err := claimScript.Run(ctx, r.rdb, []string{r.key(room)},
		now.UnixMilli(), gap.Milliseconds(), stateTTL.Milliseconds()).Slice()
	if err != nil {
		return State{}, false, fmt.Errorf("adaptive: claim %s: %w", room, err)
	}
	if len(res) < 1 || len(res)%2 != 1 {
		return State{}, false, fmt.Errorf("adaptive: claim %s: unexpected reply %v", room, res)
	}
	claimed, _ := res[0].(int64)
	h := make(map[string]string, len(res)/2)
	for i := 1; i+1 < len(res); i += 2 {
		k, _ := res[i].(string)
		v, _ := res[i+1].(string)
		h[k] = v
	}
	return decodeState(h), claimed == 1, nil
}

// write stores st for the window claimed at claimedAt; false means another
// server has claimed a later window since, and st was dropped.
func (r redisStates) write(ctx context.Context, room string, claimedAt time.Time, st State) (bool, error) {
	args := append([]any{strconv.FormatInt(claimedAt.UnixMilli(), 10), stateTTL.Milliseconds()}, st.fields()...)
	n, err := writeScript.Run(ctx, r.rdb, []string{r.key(room)}, args...).Int()
	if err != nil {
		return false, fmt.Errorf("adaptive: write %s: %w", room, err)
	}
	return n == 1, nil
}
