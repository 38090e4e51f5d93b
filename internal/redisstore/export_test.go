package redisstore

// EvalshaOnly makes s run its scripts with EVALSHA even where Redis has
// functions, for the benchmarks that compare the two.
func EvalshaOnly(s *Store) { s.fns.none.Store(true) }
