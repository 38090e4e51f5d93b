-- enter: give an identity its live ticket, or a new one at the back of the line.
-- Records, members and bucketed keys: record.lua (prepended). A new
-- ticket goes to the buckets (t:, s:, v: under the base); the room's single
-- tickets, seen and visitors keys hold tickets from before (and those of an
-- id that is not ours, from tests), read until they end.
-- KEYS[1] base: the room's key base (its hash tag: one slot). Enter runs
--   for every visitor, and each argument costs Redis its parsing and a Lua
--   string, so the room's keys are not declared one by one but named here
--   from the base, all in the base's slot:
--   visitors HASH identity -> ticket member (before)
--   tickets  HASH ticket member -> record (before)
--   seq      STRING arrival sequence (INCR); also the number of tickets ever entered
--   q        ZSET waiting members scored by seq
--   seen     ZSET waiting members scored by last sign of life (ms) (before)
--   active   ZSET admitted members scored by expiry (ms)
--   budget   HASH s = start (ms) of the current tick, u = admissions used in it,
--     h = slots held after a data loss until hu (ms) (restore.lua)
--   stats    HASH counters and the measured rate; vonly: the room's first
--     ticket was a bucketed one, so its single visitors hash is not read
--   admits   ZSET admission log of the last minute, for the rate
--   pow:<id> STRING the spent mark of proof-of-work challenge id
--   pre      ZSET the pre-queue of a scheduled opening: ticket ids scored by seq
--   log      STREAM the change log (positions)
--   and the buckets t:*, s:*, v:* (record.lua)
-- ARGV[1] identity  ARGV[2] the new ticket's tail: 20 random hex digits (or, from
--   tests, any other id, which the ticket is then kept under)
-- ARGV[3] now (ms)
-- ARGV[4] mode: "line" (the line is on), "open" (activation off), "paused",
--   "open_if_empty" (an adaptive room whose line is closed: in at once unless
--   people still wait), "closed" (the room has ended: only live tickets return),
--   "scheduled" (before the opening: a new place goes to the pre-queue)
-- ARGV[5] the admission's settings, read only when a newcomer may be
--   admitted at once: "<capacity>:<batch size>:<batch interval (ms)>:
--   <orderable_at for a fast-tracked ticket (ms)>:<session ttl (ms)>"
-- ARGV[6] proof: "none" (a new place costs nothing), "need" (it costs a
--   solution and none came), or a checked solution to spend once:
--   "<ms the spent mark lives: the challenge's remaining life>:<challenge id>"
-- ARGV[7] max waiting: a newcomer who would wait in a line this long gets
--   no place (0: no limit)
-- ARGV[8] the identity packed (record.lua)  ARGV[9] its visitors field
-- ARGV[10] now in 8 base-36 digits  ARGV[11] the tail as 10 bytes
local identity, now = ARGV[1], tonumber(ARGV[3])
local mode, base, packed, field = ARGV[4], KEYS[1], ARGV[8], ARGV[9]
local stats, q = base .. 'stats', base .. 'q'
local sv = redis.call('HMGET', stats, 'vb', 'rate', 'purged', 'vonly')
local nb, rate = tonumber(sv[1]) or 1, sv[2] or '0'
local vk = vkey(base, field, nb)

-- The room's single visitors hash holds tickets from before; a room whose
-- first ticket came after them (stats vonly) has none to look up there.
local existing = redis.call('HGET', vk, field)
if not existing and not sv[4] then existing = redis.call('HGET', base .. 'visitors', identity) end
if existing then
  local rec, k, raw = load(base, base .. 'tickets', existing)
  if rec and owns(rec, identity, packed) and
    (rec.st == 'waiting' or rec.st == 'scheduled' or (rec.st == 'admitted' and tonumber(rec.x) > now)) then
    local rank = -1
    if rec.st == 'waiting' then
      if rec.v == 2 then
        redis.call('HSET', skey(base, existing), existing, ARGV[3])
      else
        redis.call('ZADD', base .. 'seen', 'XX', ARGV[3], existing)
      end
      rank = redis.call('ZRANK', q, existing) or -1
    end
    return {idof(existing, rec), raw, rank, redis.call('ZCARD', q), rate}
  end
end

if mode == 'closed' then return {'', '', -1, 0, '0'} end

-- Line full: checked here, atomically with the place it would take, so
-- servers entering at once never overshoot; asked before any proof is spent.
local waiting = redis.call('ZCARD', q)
local maxw = tonumber(ARGV[7]) or 0
if maxw > 0 and mode ~= 'open' and waiting >= maxw then
  return {'', '', -4, 0, '0'}
end

if ARGV[6] == 'need' then return {'', '', -2, 0, '0'} end
if ARGV[6] ~= 'none' then
  local ttl, challenge = string.match(ARGV[6], '^(%d+):(.+)$')
  if not redis.call('SET', base .. 'pow:' .. challenge, '1', 'NX', 'PX', ttl) then
    return {'', '', -3, 0, '0'}
  end
end

local seq = redis.call('INCR', base .. 'seq')
local s = string.format('%d', seq) -- integer formatting: Lua's tostring goes through printf's float path
local m, id, tail = s, nil, ARGV[2]
local new = #tail == 20
if new then
  id = string.rep('0', 12 - #s) .. s .. tail
  if seq == 1 then redis.call('HSET', stats, 'vonly', '1') end
else
  m, id, tail = tail, tail, '' -- not an id of ours (a test's): kept under itself, as before
end

-- The newcomer's ticket: its state letter, entry position and the
-- admission's times (new: base-36 deltas; before: ms), written once below.
-- Straight-line code rather than a helper closing over these locals: each
-- captured local costs Lua an allocation per call, and its collector's
-- work grows with every byte an enter leaves behind.
local c, pos, times, rank = 'W', '', '||', -1
if mode == 'scheduled' then
  -- Scheduled opening: before it, a new place is in the pre-queue, unranked
  -- until the opening's draw (draw.lua) gives it a random place. The
  -- pre-queue keeps ticket ids: the draw's order is of ids.
  c = 'S'
  redis.call('ZADD', base .. 'pre', s, id)
else
  local admit = (mode == 'open') or (mode == 'open_if_empty' and waiting == 0)
  local capacity, size, interval, orderable, ttl
  if admit or (mode == 'line' and waiting == 0) then
    capacity, size, interval, orderable, ttl = string.match(ARGV[5], '^(%d+):(%d+):(%d+):(%d+):(%d+)$')
  end
  if mode == 'line' and waiting == 0 then
    -- Fast track: only into an empty line, within capacity and this tick's budget.
    -- As in tick.lua: ticks compared by start time, so a change of pace holds.
    local start = now - now % tonumber(interval)
    local b = redis.call('HMGET', base .. 'budget', 's', 'u', 'h', 'hu')
    local bs, used = tonumber(b[1]) or -1, tonumber(b[2]) or 0
    if start > bs then bs, used = start, 0 end
    local live = redis.call('ZCOUNT', base .. 'active', '(' .. ARGV[3], '+inf')
    if now < (tonumber(b[4]) or 0) then live = live + tonumber(b[3]) end
    if used < tonumber(size) and live < tonumber(capacity) then
      redis.call('HSET', base .. 'budget', 's', bs, 'u', used + 1)
      admit = true
    end
  end
  if admit then
    local x = tonumber(orderable) + tonumber(ttl)
    c = 'A'
    if new then
      times = '0|' .. b36(tonumber(orderable) - now) .. '|' .. b36(ttl)
    else
      times = ARGV[3] .. '|' .. orderable .. '|' .. num(x)
    end
    redis.call('ZADD', base .. 'active', x, m)
    redis.call('HINCRBY', stats, 'admitted_total', 1)
    redis.call('HINCRBY', stats, 'win_sum', 1)
    redis.call('ZADD', base .. 'admits', ARGV[3], ARGV[3] .. ':1:' .. m)
  else
    -- The newest seq is the highest score in the line (drawn places sit below
    -- its head), so the newcomer's rank is the count before it.
    -- A new ticket's sign of life is its entry time (record.lua): none kept.
    redis.call('ZADD', q, s, m) -- strings, not numbers: redis.call would format those
    if not new then redis.call('ZADD', base .. 'seen', ARGV[3], m) end
    rank, waiting = waiting, waiting + 1
    pos = string.format('%d', waiting) -- entry position, for the progress bar
  end
end

-- The record, from the arguments' own strings, with no reason; kept with
-- the identity's visitors entry.
local raw
if new then
  raw = c .. ARGV[10] .. pos .. '|' .. times .. '||' .. ARGV[11] .. packed
  redis.call('HSET', tkey(base, m), m, raw)
  if redis.call('HSET', vk, field, m) == 1 then vgrow(base, stats, nb, seq - (tonumber(sv[3]) or 0)) end
else
  raw = string.lower(c) .. tail .. '|' .. s .. '|' .. ARGV[3] .. '|' .. pos .. '|' .. times .. '||' .. identity
  redis.call('HSET', base .. 'tickets', m, raw)
  redis.call('HSET', base .. 'visitors', identity, m)
  redis.call('HDEL', stats, 'vonly') -- the single visitors hash is in use again
end
if c == 'W' then log_changes(q, stats, base .. 'log', s, '', waiting) end -- positions
return {id, raw, rank, waiting, rate}
