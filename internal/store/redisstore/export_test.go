package redisstore

// EvalshaOnly makes s run its scripts with EVALSHA even where Redis has
// functions, for the benchmarks that compare the two.
func EvalshaOnly(s *Store) { s.fns.none.Store(true) }

// EnterCalls is the number of enter.lua calls s made.
func EnterCalls(s *Store) uint64 { return s.batches.calls.Load() }
