-- enter: give an identity its live ticket, or a new one at the back of the line.
-- KEYS[1] visitors  HASH identity -> ticket id
-- KEYS[2] tickets   HASH ticket id -> JSON record
-- KEYS[3] seq       STRING arrival sequence (INCR)
-- KEYS[4] q         ZSET waiting tickets scored by seq
-- KEYS[5] seen      ZSET waiting tickets scored by last sign of life (ms)
-- KEYS[6] active    ZSET admitted tickets scored by expiry (ms)
-- KEYS[7] budget    HASH s = start (ms) of the current tick, u = admissions used in it
-- KEYS[8] stats     HASH counters and the measured rate
-- KEYS[9] admits    ZSET admission log of the last minute, for the rate
-- KEYS[10] pow      STRING the spent mark of the proof-of-work challenge (unused unless ARGV[10] is "spend")
-- KEYS[11] pre     ZSET the pre-queue of a scheduled opening, scored by seq
-- ARGV[1] identity  ARGV[2] new ticket id  ARGV[3] now (ms)
-- ARGV[4] mode: "line" (the line is on), "open" (activation off), "paused",
--   "open_if_empty" (an adaptive room whose line is closed: in at once unless
--   people still wait), "closed" (the room has ended: only live tickets return),
--   "scheduled" (before the opening: a new place goes to the pre-queue)
-- ARGV[5] capacity  ARGV[6] batch size  ARGV[7] batch interval (ms)
-- ARGV[8] orderable_at for a fast-tracked ticket (ms)  ARGV[9] session ttl (ms)
-- ARGV[10] proof: "none" (a new place costs nothing), "need" (it costs a
--   solution and none came), "spend" (a checked solution: spend KEYS[10] once)
-- ARGV[11] how long the spent mark lives (ms): the challenge's remaining life
-- ARGV[12] max waiting: a newcomer who would wait in a line this long gets
--   no place (0: no limit)
-- Returns {ticket id, record JSON, rank (-1 unless waiting), waiting count, rate},
-- or {"", "", -1, 0, "0"} when the room is closed and the identity has no live ticket,
-- {"", "", -2, 0, "0"} when a new place needs a solution and none came,
-- {"", "", -3, 0, "0"} when the solution was spent before,
-- {"", "", -4, 0, "0"} when the line is full.
local identity, id, now = ARGV[1], ARGV[2], tonumber(ARGV[3])
local mode = ARGV[4]
local capacity, size, interval = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
local orderable, ttl = tonumber(ARGV[8]), tonumber(ARGV[9])

local function reply(tid, rec)
  local rank = -1
  if rec.st == 'waiting' then
    rank = redis.call('ZRANK', KEYS[4], tid) or -1
  end
  return {tid, cjson.encode(rec), rank, redis.call('ZCARD', KEYS[4]),
    redis.call('HGET', KEYS[8], 'rate') or '0'}
end

local existing = redis.call('HGET', KEYS[1], identity)
if existing then
  local raw = redis.call('HGET', KEYS[2], existing)
  if raw then
    local rec = cjson.decode(raw)
    if rec.st == 'waiting' then
      redis.call('ZADD', KEYS[5], 'XX', now, existing)
      return reply(existing, rec)
    end
    if rec.st == 'admitted' and rec.x > now then
      return reply(existing, rec)
    end
    if rec.st == 'scheduled' then return reply(existing, rec) end
  end
end

if mode == 'closed' then return {'', '', -1, 0, '0'} end

-- Line full: checked here, atomically with the place it would take, so
-- servers entering at once never overshoot; asked before any proof is spent.
local maxw = tonumber(ARGV[12]) or 0
if maxw > 0 and mode ~= 'open' and redis.call('ZCARD', KEYS[4]) >= maxw then
  return {'', '', -4, 0, '0'}
end

if ARGV[10] == 'need' then return {'', '', -2, 0, '0'} end
if ARGV[10] == 'spend' and not redis.call('SET', KEYS[10], '1', 'NX', 'PX', ARGV[11]) then
  return {'', '', -3, 0, '0'}
end

local seq = redis.call('INCR', KEYS[3])
redis.call('HINCRBY', KEYS[8], 'entered_total', 1)
local rec = {i = identity, s = seq, st = 'waiting', e = now}

-- Scheduled opening: before it, a new place is in the pre-queue, unranked
-- until the opening's draw (draw.lua) gives it a random place.
if mode == 'scheduled' then
  rec.st = 'scheduled'
  redis.call('ZADD', KEYS[11], seq, id)
  redis.call('HSET', KEYS[2], id, cjson.encode(rec))
  redis.call('HSET', KEYS[1], identity, id)
  return reply(id, rec)
end

local admit = (mode == 'open') or (mode == 'open_if_empty' and redis.call('ZCARD', KEYS[4]) == 0)
if mode == 'line' and redis.call('ZCARD', KEYS[4]) == 0 then
  -- Fast track: only into an empty line, within capacity and this tick's budget.
  -- As in tick.lua: ticks compared by start time, so a change of pace holds.
  local start = now - now % interval
  local b = redis.call('HMGET', KEYS[7], 's', 'u')
  local bs, used = tonumber(b[1]) or -1, tonumber(b[2]) or 0
  if start > bs then bs, used = start, 0 end
  local live = redis.call('ZCOUNT', KEYS[6], '(' .. now, '+inf')
  if used < size and live < capacity then
    redis.call('HSET', KEYS[7], 's', bs, 'u', used + 1)
    admit = true
  end
end

if admit then
  rec.st, rec.a, rec.o, rec.x = 'admitted', now, orderable, orderable + ttl
  redis.call('ZADD', KEYS[6], rec.x, id)
  redis.call('HINCRBY', KEYS[8], 'admitted_total', 1)
  redis.call('HINCRBY', KEYS[8], 'win_sum', 1)
  redis.call('ZADD', KEYS[9], now, now .. ':1:' .. id)
else
  redis.call('ZADD', KEYS[4], seq, id)
  redis.call('ZADD', KEYS[5], now, id)
  rec.p = redis.call('ZCARD', KEYS[4]) -- position at entry, for the progress bar
end
redis.call('HSET', KEYS[2], id, cjson.encode(rec))
redis.call('HSET', KEYS[1], identity, id)
return reply(id, rec)
