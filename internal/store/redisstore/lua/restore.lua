-- restore: put back a room lost with Redis's data (restarted without
-- persistence), unless it exists, and hold its capacity either way: the
-- data was lost or went back in time (an older snapshot), so entry tokens
-- issued before still verify offline until they expire, and the active set
-- that counted them is gone or older. The room's whole capacity is held
-- (budget h, until hu) until the latest of those tokens has expired, so
-- capacity is never exceeded. enter.lua and tick.lua count h against
-- capacity while now < hu: O(1), whatever the capacity.
-- The caller lists the room in the rooms set itself: that set is in no
-- room's Redis Cluster slot.
-- KEYS[1] settings  STRING the room's settings JSON
-- KEYS[2] budget    HASH h = slots held for tokens from before, hu = until when (ms)
-- ARGV[1] settings: the JSON  ARGV[2] capacity
-- ARGV[3] hold_until (ms: now + jitter + session ttl, the latest expiry of a token from before)
-- Returns 1 when the room was put back, 0 when it existed (and is held too).
local put = redis.call('SET', KEYS[1], ARGV[1], 'NX')
local hu = tonumber(redis.call('HGET', KEYS[2], 'hu') or '0') or 0
if tonumber(ARGV[3]) > hu then
  redis.call('HSET', KEYS[2], 'h', ARGV[2], 'hu', ARGV[3])
end
if put then return 1 end
return 0
