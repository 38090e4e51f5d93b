-- present: one server's snapshot of its open connections in the room, a
-- bitmap of their seqs that replaces the server's snapshot before: one
-- call per server and interval, whatever the number of waiters. tick.lua
-- counts a waiter in a server's latest snapshot as seen when it was taken
-- (seen_of). Nothing is kept for a room without waiters.
-- KEYS[1] q        ZSET waiting members scored by seq
-- KEYS[2] present  HASH server -> "<taken (ms)>:<lo>:<bitmap bytes>": each server's latest snapshot
-- KEYS[3] bits     STRING the server's bitmap (<base>pr:<server>): bit i, in
--   Redis's order (GETBIT, SETBIT: the most significant bit of a byte first), is seq lo + i
-- ARGV[1] server  ARGV[2] now (ms)  ARGV[3] lo  ARGV[4] bitmap
-- Returns 1, or 0 when nobody waits.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SET', KEYS[3], ARGV[4])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. ':' .. ARGV[3] .. ':' .. #ARGV[4])
return 1
