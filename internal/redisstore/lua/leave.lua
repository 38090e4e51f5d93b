-- leave: an owner gives up a ticket; a waiter leaves the line, an admitted user frees the slot.
-- KEYS[1] tickets  KEYS[2] q  KEYS[3] seen  KEYS[4] active  KEYS[5] ended  KEYS[6] pre
-- KEYS[7] stats  KEYS[8] log (STREAM the change log, for positions)
-- ARGV[1] ticket id  ARGV[2] identity  ARGV[3] now (ms)
-- Returns 1, or 0 when the ticket is unknown or not the identity's.
-- Change log: one entry for this call's changes to q (scores added, removed),
-- read by the servers that keep positions themselves (queue.Changes). n counts
-- the entries so a reader sees a gap. It keeps about as many as wait, within
-- [500, 100000] entries (queue.LogKeepMin, LogKeep): a reader further behind
-- reads a snapshot, which costs no more than replaying. Scores are joined in
-- pieces: one concat of 10,000 overflows miniredis's Lua.
local function log_changes(q, stats, log, added, removed)
  if #added == 0 and #removed == 0 then return end
  local function join(t)
    local parts = {}
    for i = 1, #t, 1000 do parts[#parts + 1] = table.concat(t, ',', i, math.min(i + 999, #t)) end
    return table.concat(parts, ',')
  end
  local keep = math.min(100000, math.max(500, redis.call('ZCARD', q)))
  local n = redis.call('HINCRBY', stats, 'logn', 1)
  redis.call('XADD', log, 'MAXLEN', '~', keep, '*', 'n', n, 'a', join(added), 'd', join(removed))
end

local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
if rec.i ~= ARGV[2] then return 0 end
local score = redis.call('ZSCORE', KEYS[2], ARGV[1]) -- positions
if score then log_changes(KEYS[2], KEYS[7], KEYS[8], {}, {score}) end
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[3], ARGV[1])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[6], ARGV[1])
if rec.st == 'waiting' or rec.st == 'scheduled' or rec.st == 'admitted' then
  rec.st, rec.r = 'expired', 'left'
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(rec))
  redis.call('ZADD', KEYS[5], tonumber(ARGV[3]), ARGV[1])
end
return 1
