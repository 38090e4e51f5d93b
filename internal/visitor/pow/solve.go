package pow

import (
	"context"
	"encoding/hex"
	"fmt"
	"sync"
)

// Solve finds a counter that solves c with workers goroutines, each trying
// every workers-th counter, as a browser's Web Workers do. Load generators
// and tests use it; it is also the fastest honest solver we know.
func Solve(ctx context.Context, c Challenge, workers int) (Payload, error) {
	p := c.Parameters
	nonce, err1 := hex.DecodeString(p.Nonce)
	salt, err2 := hex.DecodeString(p.Salt)
	if err1 != nil || err2 != nil || p.Algorithm != Algorithm || p.Difficulty < 1 {
		return Payload{}, fmt.Errorf("pow: solve: %w", ErrMalformed)
	}
	target := Target(p.Difficulty)
	workers = max(workers, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		once  sync.Once
		found = int64(-1)
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := int64(w); n <= MaxCounter && ctx.Err() == nil; n += int64(workers) {
				k, err := DeriveKey(nonce, salt, uint32(n))
				if err != nil {
					return
				}
				if Solves(k, target) {
					once.Do(func() {
						found = n
						cancel()
					})
					return
				}
			}
		}()
	}
	wg.Wait()
	if found < 0 {
		if err := context.Cause(ctx); err != nil && err != context.Canceled {
			return Payload{}, fmt.Errorf("pow: solve: %w", err)
		}
		return Payload{}, fmt.Errorf("pow: solve: no counter up to %d solves it", int64(MaxCounter))
	}
	return Payload{Challenge: c, Solution: Solution{Counter: found}}, nil
}
