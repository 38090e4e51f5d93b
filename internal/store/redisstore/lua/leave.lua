-- leave: an owner gives up a ticket; a waiter leaves the line, an admitted user frees the slot.
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] tickets (before)  KEYS[2] q  KEYS[3] seen (before)  KEYS[4] active  KEYS[5] ended  (members)
-- KEYS[6] pre (ticket ids)  KEYS[7] stats  KEYS[8] log (STREAM the change log, for positions)
-- KEYS[9] base (the room's key base: <base>t:*, <base>s:*, <base>pren, same slot)
-- ARGV[1] id: the ticket id  ARGV[2] identity  ARGV[3] now (ms)  ARGV[4] packed: the identity packed
-- Returns 1, or 0 when the ticket is unknown or not the identity's.
local m, rec, _, k = find(KEYS[9], KEYS[1], ARGV[1])
if not m then return 0 end
if not owns(rec, ARGV[2], ARGV[4]) then return 0 end
local score = redis.call('ZSCORE', KEYS[2], m) -- positions
if score then log_changes(KEYS[2], KEYS[7], KEYS[8], {}, {score}) end
redis.call('ZREM', KEYS[2], m)
if isseq(m) then redis.call('HDEL', skey(KEYS[9], m), m) end -- a sign of life (alive.lua keeps any waiter's)
if rec.v ~= 2 then redis.call('ZREM', KEYS[3], m) end
redis.call('ZREM', KEYS[4], m)
if redis.call('ZREM', KEYS[6], ARGV[1]) == 1 then redis.call('HDEL', KEYS[9] .. 'pren', ARGV[1]) end
if rec.st == ST_WAITING or rec.st == ST_SCHEDULED or rec.st == ST_ADMITTED then
  rec.st, rec.r = ST_EXPIRED, REASON_LEFT
  redis.call('HSET', k, m, encode(rec))
  redis.call('ZADD', KEYS[5], tonumber(ARGV[3]), m)
end
return 1
