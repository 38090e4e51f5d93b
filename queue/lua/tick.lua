-- tick: one admission step. Reclaims expired slots, drops abandoned waiters,
-- then admits up to min(batch budget left in this tick, free capacity) from the head.
-- KEYS[1] q        ZSET waiting tickets scored by seq
-- KEYS[2] seen     ZSET waiting tickets scored by last sign of life (ms)
-- KEYS[3] active   ZSET admitted tickets scored by expiry (ms)
-- KEYS[4] tickets  HASH ticket id -> JSON record
-- KEYS[5] budget   HASH s = start (ms) of the current tick, u = admissions used in it
-- KEYS[6] stats    HASH counters and the measured rate
-- KEYS[7] admits   ZSET admission log of the last minute, for the rate
-- ARGV[1] now (ms)  ARGV[2] batch interval (ms)  ARGV[3] batch size  ARGV[4] capacity
-- ARGV[5] abandon before (ms: waiters last seen before this are gone)
-- ARGV[6] paused (1/0)  ARGV[7] session ttl (ms)  ARGV[8] most removals of each kind per tick
-- ARGV[9] configured rate (per s)  ARGV[10] event channel
-- ARGV[11..] one jitter (ms) per admission slot, at least batch size of them
-- Returns {reclaimed, abandoned, then for each admitted ticket: id, ms waited}.
local now, interval, size = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local capacity, abandon_before = tonumber(ARGV[4]), tonumber(ARGV[5])
local paused, ttl, maxscan = ARGV[6] == '1', tonumber(ARGV[7]), tonumber(ARGV[8])

local function mark(id, fields)
  local raw = redis.call('HGET', KEYS[4], id)
  if not raw then return nil end
  local rec = cjson.decode(raw)
  for k, v in pairs(fields) do rec[k] = v end
  redis.call('HSET', KEYS[4], id, cjson.encode(rec))
  return rec
end

local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, maxscan)
for _, id in ipairs(expired) do
  redis.call('ZREM', KEYS[3], id)
  mark(id, {st = 'expired', r = 'reclaimed'})
end
if #expired > 0 then redis.call('HINCRBY', KEYS[6], 'expired_total', #expired) end

local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. abandon_before, 'LIMIT', 0, maxscan)
for _, id in ipairs(gone) do
  redis.call('ZREM', KEYS[2], id)
  redis.call('ZREM', KEYS[1], id)
  mark(id, {st = 'expired', r = 'abandoned'})
end
local abandoned = #gone

local admitted, waits = {}, {}
if not paused then
  -- Ticks are compared by their start time, not their number: numbers
  -- counted in a shorter interval outrun any counted in a longer one, so a
  -- change of pace would stop the line.
  local start = now - now % interval
  local b = redis.call('HMGET', KEYS[5], 's', 'u')
  local bs, used = tonumber(b[1]) or -1, tonumber(b[2]) or 0
  if start > bs then bs, used = start, 0 end
  local n = math.min(size - used, capacity - redis.call('ZCARD', KEYS[3]))
  while n > 0 do
    local popped = redis.call('ZPOPMIN', KEYS[1], n)
    if #popped == 0 then break end
    for i = 1, #popped, 2 do
      local id = popped[i]
      local seen_at = tonumber(redis.call('ZSCORE', KEYS[2], id))
      redis.call('ZREM', KEYS[2], id)
      if seen_at and seen_at < abandon_before then
        mark(id, {st = 'expired', r = 'abandoned'})
        abandoned = abandoned + 1
      else
        local o = now + tonumber(ARGV[11 + #admitted])
        local rec = mark(id, {st = 'admitted', a = now, o = o, x = o + ttl})
        if rec then
          redis.call('ZADD', KEYS[3], o + ttl, id)
          admitted[#admitted + 1] = id
          waits[#waits + 1] = now - rec.e
          n = n - 1
        end
      end
    end
  end
  if #admitted > 0 then
    redis.call('HSET', KEYS[5], 's', bs, 'u', used + #admitted)
    redis.call('HINCRBY', KEYS[6], 'admitted_total', #admitted)
    redis.call('HINCRBY', KEYS[6], 'win_sum', #admitted)
    redis.call('ZADD', KEYS[7], now, now .. ':' .. #admitted .. ':' .. admitted[1])
    redis.call('PUBLISH', ARGV[10], table.concat(admitted, ','))
  end
end
if abandoned > 0 then redis.call('HINCRBY', KEYS[6], 'abandoned_total', abandoned) end

-- The measured rate: admissions in the last minute over the time they span.
local cutoff = now - 60000
local old = redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', '(' .. cutoff)
if #old > 0 then
  local dropped = 0
  for _, m in ipairs(old) do
    dropped = dropped + tonumber(string.match(m, '^[^:]+:(%d+):'))
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', '(' .. cutoff)
  redis.call('HINCRBY', KEYS[6], 'win_sum', -dropped)
end
local sum = tonumber(redis.call('HGET', KEYS[6], 'win_sum') or '0')
local rate = ARGV[9]
if sum > 0 then
  local first = redis.call('ZRANGE', KEYS[7], 0, 0, 'WITHSCORES')
  local span = math.max(now - tonumber(first[2]) + interval, interval) / 1000
  rate = tostring(sum / span)
end
redis.call('HSET', KEYS[6], 'rate', rate)

local out = {#expired, abandoned}
for i, id in ipairs(admitted) do
  out[#out + 1] = id
  out[#out + 1] = waits[i]
end
return out
