-- enter: give an identity its live ticket, or a new one at the back of the line.
-- Records and members: record.lua (prepended).
-- KEYS[1] visitors  HASH identity -> ticket member
-- KEYS[2] tickets   HASH ticket member -> record
-- KEYS[3] seq       STRING arrival sequence (INCR); also the number of tickets ever entered
-- KEYS[4] q         ZSET waiting members scored by seq
-- KEYS[5] seen      ZSET waiting members scored by last sign of life (ms)
-- KEYS[6] active    ZSET admitted members scored by expiry (ms)
-- KEYS[7] budget    HASH s = start (ms) of the current tick, u = admissions used in it
-- KEYS[8] stats     HASH counters and the measured rate
-- KEYS[9] admits    ZSET admission log of the last minute, for the rate
-- KEYS[10] pow      STRING the spent mark of the proof-of-work challenge (unused unless ARGV[10] is "spend")
-- KEYS[11] pre     ZSET the pre-queue of a scheduled opening: ticket ids scored by seq
-- KEYS[12] log     STREAM the change log (positions)
-- ARGV[1] identity  ARGV[2] the new ticket's tail: 20 random hex digits (or, from
--   tests, any other id, which the ticket is then kept under)
-- ARGV[3] now (ms)
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
-- Returns {ticket id, record, rank (-1 unless waiting), waiting count, rate},
-- or {"", "", -1, 0, "0"} when the room is closed and the identity has no live ticket,
-- {"", "", -2, 0, "0"} when a new place needs a solution and none came,
-- {"", "", -3, 0, "0"} when the solution was spent before,
-- {"", "", -4, 0, "0"} when the line is full.
local identity, now = ARGV[1], tonumber(ARGV[3])
local mode = ARGV[4]

local function rate() return redis.call('HGET', KEYS[8], 'rate') or '0' end

local existing = redis.call('HGET', KEYS[1], identity)
if existing then
  local raw = redis.call('HGET', KEYS[2], existing)
  local rec = decode(raw)
  if rec and (rec.st == 'waiting' or rec.st == 'scheduled' or (rec.st == 'admitted' and tonumber(rec.x) > now)) then
    local rank = -1
    if rec.st == 'waiting' then
      redis.call('ZADD', KEYS[5], 'XX', ARGV[3], existing)
      rank = redis.call('ZRANK', KEYS[4], existing) or -1
    end
    return {idof(existing, rec), raw, rank, redis.call('ZCARD', KEYS[4]), rate()}
  end
end

if mode == 'closed' then return {'', '', -1, 0, '0'} end

-- Line full: checked here, atomically with the place it would take, so
-- servers entering at once never overshoot; asked before any proof is spent.
local waiting = redis.call('ZCARD', KEYS[4])
local maxw = tonumber(ARGV[12]) or 0
if maxw > 0 and mode ~= 'open' and waiting >= maxw then
  return {'', '', -4, 0, '0'}
end

if ARGV[10] == 'need' then return {'', '', -2, 0, '0'} end
if ARGV[10] == 'spend' and not redis.call('SET', KEYS[10], '1', 'NX', 'PX', ARGV[11]) then
  return {'', '', -3, 0, '0'}
end

local seq = redis.call('INCR', KEYS[3])
local s = string.format('%d', seq) -- integer formatting: Lua's tostring goes through printf's float path
local m, id, tail = s, nil, ARGV[2]
if #tail == 20 then
  id = string.rep('0', 12 - #s) .. s .. tail
else
  m, id, tail = tail, tail, '' -- not an id of ours (a test's): kept under itself, as before
end
-- The record of a new waiter, written from the arguments' own strings.
local head = tail .. '|' .. s .. '|' .. ARGV[3] .. '|'

-- Scheduled opening: before it, a new place is in the pre-queue, unranked
-- until the opening's draw (draw.lua) gives it a random place. The pre-queue
-- keeps ticket ids: the draw's order is of ids.
if mode == 'scheduled' then
  local raw = 's' .. head .. '|||||' .. identity
  redis.call('ZADD', KEYS[11], s, id)
  redis.call('HSET', KEYS[2], m, raw)
  redis.call('HSET', KEYS[1], identity, m)
  return {id, raw, -1, waiting, rate()}
end

local admit = (mode == 'open') or (mode == 'open_if_empty' and waiting == 0)
if mode == 'line' and waiting == 0 then
  -- Fast track: only into an empty line, within capacity and this tick's budget.
  -- As in tick.lua: ticks compared by start time, so a change of pace holds.
  local interval = tonumber(ARGV[7])
  local start = now - now % interval
  local b = redis.call('HMGET', KEYS[7], 's', 'u')
  local bs, used = tonumber(b[1]) or -1, tonumber(b[2]) or 0
  if start > bs then bs, used = start, 0 end
  local live = redis.call('ZCOUNT', KEYS[6], '(' .. ARGV[3], '+inf')
  if used < tonumber(ARGV[6]) and live < tonumber(ARGV[5]) then
    redis.call('HSET', KEYS[7], 's', bs, 'u', used + 1)
    admit = true
  end
end

local raw, rank
if admit then
  local x = tonumber(ARGV[8]) + tonumber(ARGV[9])
  raw = 'a' .. head .. '|' .. ARGV[3] .. '|' .. ARGV[8] .. '|' .. num(x) .. '||' .. identity
  rank = -1
  redis.call('ZADD', KEYS[6], x, m)
  redis.call('HINCRBY', KEYS[8], 'admitted_total', 1)
  redis.call('HINCRBY', KEYS[8], 'win_sum', 1)
  redis.call('ZADD', KEYS[9], ARGV[3], ARGV[3] .. ':1:' .. m)
else
  -- The newest seq is the highest score in the line (drawn places sit below
  -- its head), so the newcomer's rank is the count before it.
  redis.call('ZADD', KEYS[4], s, m) -- strings, not numbers: redis.call would format those
  redis.call('ZADD', KEYS[5], ARGV[3], m)
  rank, waiting = waiting, waiting + 1
  raw = 'w' .. head .. waiting .. '|||||' .. identity -- entry position, for the progress bar
end
redis.call('HSET', KEYS[2], m, raw)
redis.call('HSET', KEYS[1], identity, m)
if not admit then log_changes(KEYS[4], KEYS[8], KEYS[12], {s}, {}) end -- positions
return {id, raw, rank, waiting, rate()}
