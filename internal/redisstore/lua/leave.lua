-- leave: an owner gives up a ticket; a waiter leaves the line, an admitted user frees the slot.
-- KEYS[1] tickets  KEYS[2] q  KEYS[3] seen  KEYS[4] active  KEYS[5] ended  KEYS[6] pre
-- KEYS[7] stats  KEYS[8] log (STREAM the change log, for positions)
-- ARGV[1] ticket id  ARGV[2] identity  ARGV[3] now (ms)
-- Returns 1, or 0 when the ticket is unknown or not the identity's.
-- Change log: one entry for this call's changes to q (scores added, removed),
-- read by the servers that keep positions themselves (queue.Changes). n counts
-- the entries so a reader sees a gap; MAXLEN ~ 50000 is queue.LogKeep.
local function log_changes(stats, log, added, removed)
  if #added == 0 and #removed == 0 then return end
  local n = redis.call('HINCRBY', stats, 'logn', 1)
  redis.call('XADD', log, 'MAXLEN', '~', 50000, '*', 'n', n,
    'a', table.concat(added, ','), 'd', table.concat(removed, ','))
end

local raw = redis.call('HGET', KEYS[1], ARGV[1])
if not raw then return 0 end
local rec = cjson.decode(raw)
if rec.i ~= ARGV[2] then return 0 end
local score = redis.call('ZSCORE', KEYS[2], ARGV[1]) -- positions
if score then log_changes(KEYS[7], KEYS[8], {}, {score}) end
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
