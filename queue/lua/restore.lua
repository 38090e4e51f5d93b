-- restore: put back a room lost with Redis's data (restarted without
-- persistence), unless it exists. Entry tokens issued before the loss still
-- verify offline until they expire, and the active set that counted them is
-- gone: the room's whole capacity is held by placeholder slots until the
-- latest of those tokens has expired, so capacity is never exceeded.
-- KEYS[1] settings  STRING the room's settings JSON
-- KEYS[2] rooms     SET every room id
-- KEYS[3] active    ZSET admitted tickets scored by expiry (ms)
-- ARGV[1] room id  ARGV[2] settings JSON  ARGV[3] capacity
-- ARGV[4] hold until (ms: now + jitter + session ttl, the latest expiry of a token from before)
-- Returns 1 when the room was put back, 0 when it existed.
redis.call('SADD', KEYS[2], ARGV[1])
if redis.call('SET', KEYS[1], ARGV[2], 'NX') == false then return 0 end
local until_ms, n = tonumber(ARGV[4]), tonumber(ARGV[3])
for i = 1, n, 500 do
  local args = {}
  for j = i, math.min(n, i + 499) do
    args[#args + 1] = until_ms
    args[#args + 1] = 'held-' .. j
  end
  redis.call('ZADD', KEYS[3], unpack(args))
end
return 1
