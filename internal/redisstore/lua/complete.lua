-- complete: checkout is done; free the admitted ticket's slot at once.
-- KEYS[1] tickets  KEYS[2] active  KEYS[3] stats  KEYS[4] ended
-- ARGV[1] ticket id  ARGV[2] now (ms)
-- Returns 1 when a slot was freed, 0 when the ticket held none.
if redis.call('ZREM', KEYS[2], ARGV[1]) == 0 then return 0 end
local raw = redis.call('HGET', KEYS[1], ARGV[1])
if raw then
  local rec = cjson.decode(raw)
  rec.st, rec.r = 'expired', 'completed'
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
  redis.call('ZADD', KEYS[4], tonumber(ARGV[2]), ARGV[1])
end
redis.call('HINCRBY', KEYS[3], 'completed_total', 1)
return 1
