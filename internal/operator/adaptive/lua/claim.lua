-- claim: one server evaluates a room's window. It claims when the last
-- evaluation is at least gap ms old, or that far in the future (a clock set
-- back must not stall the room), and gets the stored state either way.
-- KEYS[1] activation HASH  ARGV[1] now (ms)  ARGV[2] gap (ms)  ARGV[3] ttl (ms)
-- Returns {claimed (1/0), field, value, ...}.
local now, gap = tonumber(ARGV[1]), tonumber(ARGV[2])
local last = tonumber(redis.call('HGET', KEYS[1], 'evaluated_at') or '')
local claimed = 0
if not last or now - last >= gap or last - now >= gap then
  redis.call('HSET', KEYS[1], 'evaluated_at', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  claimed = 1
end
local out = redis.call('HGETALL', KEYS[1])
table.insert(out, 1, claimed)
return out
