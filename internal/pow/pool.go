package pow

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"
)

// ErrNoChallenge: the pool has no key for this cost right now; the client
// asks again in a moment, while the refill catches up.
var ErrNoChallenge = errors.New("pow: no challenge ready")

// Key is the server's half of a challenge, made ahead of time: scrypt's input
// (nonce, salt and a secret counter below Cost) and its output. The counter
// itself is not kept: only the derived key is ever published (its prefix and
// an HMAC of it).
type Key struct {
	Nonce, Salt, Derived []byte
	Cost                 int64
}

// Keys hands out keys for challenges of a given cost.
type Keys interface {
	Take(cost int64) (Key, error)
}

// Inline derives a key in the call: every challenge costs the caller one
// scrypt run. For tests and tools, never a public server.
type Inline struct{}

// Take derives a fresh key for cost.
func (Inline) Take(cost int64) (Key, error) { return NewKey(cost, DeriveKey) }

// NewKey picks a nonce, a salt and a secret counter in [0, cost) and derives
// the key with derive.
func NewKey(cost int64, derive func(nonce, salt []byte, counter uint32) ([]byte, error)) (Key, error) {
	cost = clampCost(cost)
	n, err := rand.Int(rand.Reader, big.NewInt(cost))
	if err != nil {
		return Key{}, err
	}
	k := Key{Nonce: make([]byte, 16), Salt: make([]byte, 16), Cost: cost}
	_, _ = rand.Read(k.Nonce)
	_, _ = rand.Read(k.Salt)
	if k.Derived, err = derive(k.Nonce, k.Salt, uint32(n.Int64())); err != nil {
		return Key{}, err
	}
	return k, nil
}

func clampCost(cost int64) int64 { return min(max(cost, 1), MaxCounter) }

// PoolOptions size a Pool; zero values take the defaults.
type PoolOptions struct {
	// Size is how many keys are kept per cost.
	Size int
	// Rate is how many keys a second the refill may derive: it bounds the
	// CPU that scrypt takes on the server, however many challenges are asked.
	Rate float64
	// Costs bounds how many distinct costs are kept (rooms mostly share the
	// default); the one least recently asked for makes way for a new one.
	Costs int
	// Warm is a cost filled from the start (the rooms' default).
	Warm  int64
	Clock clockwork.Clock
	// Derive runs scrypt; tests count its runs.
	Derive func(nonce, salt []byte, counter uint32) ([]byte, error)
}

// Defaults. One scrypt run takes about 3.7 ms on the reference machine
// (docs/benchmarks.md), so 64 a second is a quarter of one core.
const (
	DefaultPoolSize  = 1024
	DefaultPoolRate  = 64
	DefaultPoolCosts = 8
)

// Pool keeps keys made ahead of time, per cost, so issuing a challenge costs
// an HMAC: nothing in scrypt's input is bound to the room or the visitor
// (that binding is the signed data). One goroutine (Run) refills it at a
// bounded rate; each key is handed out once.
type Pool struct {
	opt     PoolOptions
	mu      sync.Mutex
	costs   map[int64]*shelf
	wake    chan struct{}
	derived atomic.Int64
}

type shelf struct {
	keys  []Key
	asked time.Time // last Take, to pick which cost makes way
}

// NewPool makes an empty pool; Run fills it.
func NewPool(opt PoolOptions) *Pool {
	if opt.Size <= 0 {
		opt.Size = DefaultPoolSize
	}
	if opt.Rate <= 0 {
		opt.Rate = DefaultPoolRate
	}
	if opt.Costs <= 0 {
		opt.Costs = DefaultPoolCosts
	}
	if opt.Clock == nil {
		opt.Clock = clockwork.NewRealClock()
	}
	if opt.Derive == nil {
		opt.Derive = DeriveKey
	}
	p := &Pool{opt: opt, costs: make(map[int64]*shelf), wake: make(chan struct{}, 1)}
	if opt.Warm > 0 {
		p.costs[clampCost(opt.Warm)] = &shelf{asked: opt.Clock.Now()}
	}
	return p
}

// Take hands out one key for cost, or ErrNoChallenge when none is ready; a
// cost not kept yet is kept from now on.
func (p *Pool) Take(cost int64) (Key, error) {
	cost = clampCost(cost)
	p.mu.Lock()
	defer p.mu.Unlock()
	s, ok := p.costs[cost]
	if !ok {
		if len(p.costs) >= p.opt.Costs {
			p.evict()
		}
		s = &shelf{}
		p.costs[cost] = s
	}
	s.asked = p.opt.Clock.Now()
	select { // the refill may be waiting for room on a shelf
	case p.wake <- struct{}{}:
	default:
	}
	if len(s.keys) == 0 {
		return Key{}, ErrNoChallenge
	}
	k := s.keys[len(s.keys)-1]
	s.keys[len(s.keys)-1] = Key{}
	s.keys = s.keys[:len(s.keys)-1]
	return k, nil
}

// evict drops the cost least recently asked for; p.mu is held.
func (p *Pool) evict() {
	var oldest int64
	var at time.Time
	for c, s := range p.costs {
		if at.IsZero() || s.asked.Before(at) {
			oldest, at = c, s.asked
		}
	}
	delete(p.costs, oldest)
}

// Derived is how many keys the refill has derived: scrypt runs.
func (p *Pool) Derived() int64 { return p.derived.Load() }

// Ready is how many keys are ready for cost.
func (p *Pool) Ready(cost int64) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.costs[clampCost(cost)]; ok {
		return len(s.keys)
	}
	return 0
}

// Run refills the pool until ctx ends: one key at a time, for the emptiest
// shelf, at most Rate a second; it sleeps while every shelf is full.
func (p *Pool) Run(ctx context.Context) error {
	every := time.Duration(float64(time.Second) / p.opt.Rate)
	for {
		cost, ok := p.neediest()
		if !ok {
			select {
			case <-ctx.Done():
				return nil
			case <-p.wake:
				continue
			}
		}
		start := p.opt.Clock.Now()
		k, err := NewKey(cost, p.opt.Derive)
		p.derived.Add(1)
		if err == nil {
			p.put(k)
		}
		// The next run starts an interval after this one started: Rate a
		// second while a run takes less than the interval.
		select {
		case <-ctx.Done():
			return nil
		case <-p.opt.Clock.After(every - p.opt.Clock.Since(start)):
		}
	}
}

// neediest is the cost with the fewest keys, if any shelf has room.
func (p *Pool) neediest() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	best, n := int64(0), p.opt.Size
	for c, s := range p.costs {
		if len(s.keys) < n {
			best, n = c, len(s.keys)
		}
	}
	return best, n < p.opt.Size
}

// put shelves k, unless its cost was dropped meanwhile.
func (p *Pool) put(k Key) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.costs[k.Cost]; ok && len(s.keys) < p.opt.Size {
		s.keys = append(s.keys, k)
	}
}
