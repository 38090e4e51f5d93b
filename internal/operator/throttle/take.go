package throttle

import (
	"context"
	"time"
)

// Take counts one use by client against PerClient alone, never Overall: a
// rate of something every client may do (ask for a proof-of-work challenge),
// where one client's flood must not slow anyone else. It is refused, with
// how long to wait, when client used up its allowance.
func (f *Failures) Take(ctx context.Context, client string) (time.Duration, bool) {
	return f.check(ctx, client, f.o.PerClient, 1)
}
