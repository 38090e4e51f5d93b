package push

import (
	"context"
	"sync/atomic"
)

type holdKey struct{}

// hold is a request's promise to report when its connection is over.
type hold struct {
	taken atomic.Bool
	end   func(error)
}

// Hold prepares a request whose connection may outlive its handler:
// ServeWS returns as soon as the hub holds the upgraded connection, so
// that the handler's goroutine, stack and request are freed, and whatever
// counts open connections must learn of their end elsewhere. end is called
// exactly once with why the connection ended (nil: normally): by the hub
// when it took the connection over, else by finish, which the caller runs
// once the handler returned.
func Hold(ctx context.Context, end func(error)) (_ context.Context, finish func()) {
	h := &hold{end: end}
	return context.WithValue(ctx, holdKey{}, h), func() {
		if !h.taken.Load() {
			h.end(nil)
		}
	}
}

// takeHold claims the request's hold for the hub: the returned func (never
// nil) reports the connection's end.
func takeHold(ctx context.Context) func(error) {
	h, _ := ctx.Value(holdKey{}).(*hold)
	if h == nil || !h.taken.CompareAndSwap(false, true) {
		return func(error) {}
	}
	return h.end
}
