-- restore: put back a room lost with Redis's data (restarted without
-- persistence), unless it exists. Entry tokens issued before the loss still
-- verify offline until they expire, and the active set that counted them is
-- gone: the room's whole capacity is held by placeholder slots until the
-- latest of those tokens has expired, so capacity is never exceeded.
-- The caller lists the room in the rooms set itself: that set is in no
-- room's Redis Cluster slot.
-- KEYS[1] settings  STRING the room's settings JSON
-- KEYS[2] active    ZSET admitted tickets scored by expiry (ms)
-- ARGV[1] settings JSON  ARGV[2] capacity
-- ARGV[3] hold until (ms: now + jitter + session ttl, the latest expiry of a token from before)
-- Returns 1 when the room was put back, 0 when it existed.
if redis.call('SET', KEYS[1], ARGV[1], 'NX') == false then return 0 end
local until_ms, n = tonumber(ARGV[3]), tonumber(ARGV[2])
for i = 1, n, 500 do
  local args = {}
  for j = i, math.min(n, i + 499) do
    args[#args + 1] = until_ms
    args[#args + 1] = 'held-' .. j
  end
  redis.call('ZADD', KEYS[2], unpack(args))
end
return 1
