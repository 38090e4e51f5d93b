package pow

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"sync"
	"time"
)

// Solve finds the counter of c with workers goroutines, each trying every
// workers-th counter, as a browser's Web Workers do. Load generators and
// tests use it; it is also the fastest honest solver we know.
func Solve(ctx context.Context, c Challenge, workers int) (Payload, error) {
	p := c.Parameters
	nonce, err1 := hex.DecodeString(p.Nonce)
	salt, err2 := hex.DecodeString(p.Salt)
	prefix, err3 := hex.DecodeString(p.KeyPrefix)
	if err1 != nil || err2 != nil || err3 != nil || p.Algorithm != Algorithm {
		return Payload{}, fmt.Errorf("pow: solve: %w", ErrMalformed)
	}
	workers = max(workers, 1)
	start := time.Now()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		once  sync.Once
		found Solution
		wg    sync.WaitGroup
	)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := w; n < MaxCounter && ctx.Err() == nil; n += workers {
				k, err := DeriveKey(nonce, salt, uint32(n))
				if err != nil {
					return
				}
				if bytes.HasPrefix(k, prefix) {
					once.Do(func() {
						found = Solution{Counter: int64(n), DerivedKey: hex.EncodeToString(k)}
						cancel()
					})
					return
				}
			}
		}()
	}
	wg.Wait()
	if found.DerivedKey == "" {
		if err := context.Cause(ctx); err != nil && err != context.Canceled {
			return Payload{}, fmt.Errorf("pow: solve: %w", err)
		}
		return Payload{}, fmt.Errorf("pow: solve: no counter below %d solves it", MaxCounter)
	}
	found.Time = float64(time.Since(start).Milliseconds())
	return Payload{Challenge: c, Solution: found}, nil
}
