-- tick: one admission step. Purges tickets that ended before the grace
-- period, reclaims expired slots, drops abandoned waiters, then admits up to
-- min(batch budget left in this tick, free capacity) from the head. Every
-- kind of removal is bounded per tick, so a tick stays short however many
-- ghosts piled up; the rest go in the next ticks.
-- Abandonment: the head is checked exactly as it is admitted; the rest of
-- the line is swept from a cursor (stats sw, a rank in q), at most ARGV[8]
-- waiters a tick, round-robin: a line that short is swept whole each tick,
-- a longer one drops a silent waiter within one sweep of the line (length /
-- ARGV[8] ticks) after abandon_after_s, never before.
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] q        ZSET waiting members scored by seq
-- KEYS[2] seen     ZSET waiting members scored by last sign of life (ms) (before)
-- KEYS[3] active   ZSET admitted members scored by expiry (ms)
-- KEYS[4] tickets  HASH ticket member -> record (before)
-- KEYS[5] budget   HASH s = start (ms) of the current tick, u = admissions used in it
-- KEYS[6] stats    HASH counters and the measured rate
-- KEYS[7] admits   ZSET admission log of the last minute, for the rate
-- KEYS[8] ended    ZSET ended members scored by end time (ms)
-- KEYS[9] visitors HASH identity -> ticket member (before)
-- KEYS[10] log     STREAM the change log (positions)
-- KEYS[11] base    the room's key base: <base>t:*, s:*, v:* (same slot)
-- ARGV[1] now (ms)  ARGV[2] batch interval (ms)  ARGV[3] batch size  ARGV[4] capacity
-- ARGV[5] abandon before (ms: waiters last seen before this are gone)
-- ARGV[6] paused (1/0)  ARGV[7] session ttl (ms)  ARGV[8] most removals of each kind per tick
-- ARGV[9] configured rate (per s)  ARGV[10] event channel
-- ARGV[11] purge before (ms: tickets that ended before this are deleted)
-- ARGV[12..] one jitter (ms) per admission slot, at least batch size of them
-- ARGV[12 + size ..] a random line's draws, one per slot, in [0, 2^48): absent for FIFO
-- Returns {reclaimed, abandoned, purged, then for each admitted ticket: id, ms waited}.
local now, interval, size = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local capacity, abandon_before = tonumber(ARGV[4]), tonumber(ARGV[5])
local paused, ttl, maxscan = ARGV[6] == '1', tonumber(ARGV[7]), tonumber(ARGV[8])
local base = KEYS[11]
local removed = {} -- scores taken out of q (positions)

local function mark(m, fields)
  local rec, k = load(base, KEYS[4], m)
  if not rec then return nil end
  for f, v in pairs(fields) do rec[f] = v end
  redis.call('HSET', k, m, encode(rec))
  return rec
end

-- seen_of is the last sign of life of each member (nil: none kept): the
-- s: buckets, one HMGET per bucket, then the seen set from before.
local function seen_of(members)
  local out, groups, order, missing = {}, {}, {}, {}
  for i, m in ipairs(members) do
    if isseq(m) then
      local k = skey(base, m)
      if not groups[k] then groups[k] = {}; order[#order + 1] = k end
      local g = groups[k]
      g[#g + 1] = i
    else
      missing[#missing + 1] = i
    end
  end
  for _, k in ipairs(order) do
    local g, fields = groups[k], {}
    for j, i in ipairs(g) do fields[j] = members[i] end
    local vals = redis.call('HMGET', k, unpack(fields))
    for j, i in ipairs(g) do
      if vals[j] then out[i] = tonumber(vals[j]) else missing[#missing + 1] = i end
    end
  end
  if #missing > 0 and redis.call('EXISTS', KEYS[2]) == 1 then
    local ms = {}
    for j, i in ipairs(missing) do ms[j] = members[i] end
    for j, v in ipairs(redis.call('ZMSCORE', KEYS[2], unpack(ms))) do
      if v then out[missing[j]] = tonumber(v) end
    end
  end
  return out
end

-- unseen forgets the members' signs of life (they left the line).
local function unseen(members)
  local groups, order = {}, {}
  for _, m in ipairs(members) do
    if isseq(m) then
      local k = skey(base, m)
      if not groups[k] then groups[k] = {}; order[#order + 1] = k end
      local g = groups[k]
      g[#g + 1] = m
    end
  end
  for _, k in ipairs(order) do redis.call('HDEL', k, unpack(groups[k])) end
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('ZREM', KEYS[2], unpack(members)) end
end

-- finish marks tickets ended; their records stay for the grace period so
-- their owners can still read why. Removals go in one call per key (unpack
-- takes up to 8000 values, far above ARGV[8]).
local function finish(members, reason)
  local z = {}
  for _, m in ipairs(members) do
    if mark(m, {st = 'expired', r = reason}) then
      z[#z + 1] = now
      z[#z + 1] = m
    end
  end
  if #z > 0 then redis.call('ZADD', KEYS[8], unpack(z)) end
end

-- Purge first: deleting frees memory, so a Redis at maxmemory gets room back.
local purge = redis.call('ZRANGEBYSCORE', KEYS[8], '-inf', '(' .. ARGV[11], 'LIMIT', 0, maxscan)
if #purge > 0 then
  for _, m in ipairs(purge) do
    local rec, k = load(base, KEYS[4], m)
    if rec then
      if rec.v == 2 then
        vdrop(base, KEYS[6], rec.i, m)
      elseif rec.i and redis.call('HGET', KEYS[9], rec.i) == m then
        redis.call('HDEL', KEYS[9], rec.i)
      end
      redis.call('HDEL', k, m)
    end
  end
  redis.call('ZREM', KEYS[8], unpack(purge))
end

local expired = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, maxscan)
if #expired > 0 then
  redis.call('ZREM', KEYS[3], unpack(expired))
  finish(expired, 'reclaimed')
  redis.call('HINCRBY', KEYS[6], 'expired_total', #expired)
end

-- The silent: from before, by the seen set's order; then the sweep.
local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. abandon_before, 'LIMIT', 0, maxscan)
local total = redis.call('ZCARD', KEYS[1])
if total > 0 then
  local cursor = tonumber(redis.call('HGET', KEYS[6], 'sw')) or 0
  if cursor >= total then cursor = 0 end
  local batch = redis.call('ZRANGE', KEYS[1], cursor, cursor + maxscan - 1)
  local seen = seen_of(batch)
  local was = {}
  for _, m in ipairs(gone) do was[m] = true end
  local examined, dropped = 0, 0
  for i, m in ipairs(batch) do
    if #gone >= maxscan then break end
    examined = i
    if seen[i] and seen[i] < abandon_before and not was[m] then
      gone[#gone + 1] = m
      dropped = dropped + 1
    end
  end
  redis.call('HSET', KEYS[6], 'sw', cursor + examined - dropped)
end
if #gone > 0 then
  for _, sc in ipairs(redis.call('ZMSCORE', KEYS[1], unpack(gone))) do
    if sc then removed[#removed + 1] = sc end -- positions
  end
  unseen(gone)
  redis.call('ZREM', KEYS[1], unpack(gone))
  finish(gone, 'abandoned')
end
local abandoned = #gone

-- pop takes the next count waiters as ZPOPMIN's {member, score, …}: the head,
-- or in a random line the waiter at rank draw % waiting for each draw (the
-- draws come from crypto/rand in Go, not math.random), until they run out.
local random, drawn = #ARGV >= 11 + 2 * size, 0
local function pop(count)
  if not random then return redis.call('ZPOPMIN', KEYS[1], count) end
  local out = {}
  while #out < 2 * count and drawn < size do
    local left = redis.call('ZCARD', KEYS[1])
    if left == 0 then break end
    drawn = drawn + 1
    local rank = tonumber(ARGV[11 + size + drawn]) % left
    local m = redis.call('ZRANGE', KEYS[1], rank, rank, 'WITHSCORES')
    redis.call('ZREM', KEYS[1], m[1])
    out[#out + 1] = m[1]
    out[#out + 1] = m[2]
  end
  return out
end

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
  -- Ghosts at the head are dropped as they are popped, at most maxscan of
  -- them per tick: the line drains them over several ticks.
  local skipped, ghosts = 0, {}
  while n > 0 and skipped < maxscan do
    -- At most 4000 a pop: unpack below stops near 8000 values, and a batch
    -- may be 10,000.
    local popped = pop(math.min(n, 4000))
    if #popped == 0 then break end
    local members = {}
    for i = 1, #popped, 2 do
      members[#members + 1] = popped[i]
      removed[#removed + 1] = popped[i + 1] -- positions
    end
    local seen = seen_of(members)
    unseen(members)
    for i, m in ipairs(members) do
      local seen_at = seen[i]
      if seen_at and seen_at < abandon_before then
        ghosts[#ghosts + 1] = m
        skipped = skipped + 1
      else
        local o = now + tonumber(ARGV[12 + #admitted])
        local rec = mark(m, {st = 'admitted', a = now, o = o, x = o + ttl})
        if rec then
          redis.call('ZADD', KEYS[3], o + ttl, m)
          admitted[#admitted + 1] = idof(m, rec)
          waits[#waits + 1] = now - tonumber(rec.e)
          n = n - 1
        else
          skipped = skipped + 1 -- no record: nothing to admit
        end
      end
    end
  end
  finish(ghosts, 'abandoned')
  abandoned = abandoned + #ghosts
  if #admitted > 0 then
    redis.call('HSET', KEYS[5], 's', bs, 'u', used + #admitted)
    redis.call('HINCRBY', KEYS[6], 'admitted_total', #admitted)
    redis.call('HINCRBY', KEYS[6], 'win_sum', #admitted)
    redis.call('ZADD', KEYS[7], now, now .. ':' .. #admitted .. ':' .. admitted[1])
    -- Joined in pieces: one concat of a 10,000 batch overflows miniredis's
    -- Lua (embedded mode).
    local parts = {}
    for i = 1, #admitted, 1000 do
      parts[#parts + 1] = table.concat(admitted, ',', i, math.min(i + 999, #admitted))
    end
    redis.call('PUBLISH', ARGV[10], table.concat(parts, ','))
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
log_changes(KEYS[1], KEYS[6], KEYS[10], {}, removed) -- positions

local out = {#expired, abandoned, #purge}
for i, id in ipairs(admitted) do
  out[#out + 1] = id
  out[#out + 1] = waits[i]
end
return out
