-- complete: checkout is done; free the admitted ticket's slot at once.
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] tickets (before)  KEYS[2] active  KEYS[3] stats  KEYS[4] ended  (members)
-- KEYS[5] base (the room's key base: <base>t:*, same slot)
-- ARGV[1] id: the ticket id  ARGV[2] now (ms)
-- Returns 1 when a slot was freed, 0 when the ticket held none.
local m, rec, _, k = find(KEYS[5], KEYS[1], ARGV[1])
if redis.call('ZREM', KEYS[2], m or ARGV[1]) == 0 then return 0 end
if rec then
  rec.st, rec.r = ST_EXPIRED, REASON_COMPLETED
  redis.call('HSET', k, m, encode(rec))
  redis.call('ZADD', KEYS[4], tonumber(ARGV[2]), m)
end
redis.call('HINCRBY', KEYS[3], 'completed_total', 1)
return 1
