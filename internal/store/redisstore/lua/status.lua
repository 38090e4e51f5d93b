-- status: read a ticket; a waiting ticket's read is its sign of life.
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] tickets  HASH ticket member -> record (before)
-- KEYS[2] q        ZSET waiting members scored by seq
-- KEYS[3] seen     ZSET waiting members scored by last sign of life (ms) (before)
-- KEYS[4] stats    HASH counters and the measured rate
-- KEYS[5] base     the room's key base: <base>t:* records, <base>s:* signs of life (same slot)
-- ARGV[1] id: the ticket id  ARGV[2] identity ("" skips the owner check)  ARGV[3] now (ms)
-- ARGV[4] packed: the identity packed (record.lua)
-- Returns false when the ticket is unknown or not the identity's,
-- else {record, rank (CODE_UNRANKED unless waiting), waiting count, rate, score}: the
-- score (its place in q, the key of its local position) only while waiting.
local id, identity = ARGV[1], ARGV[2]
local m, rec, raw = find(KEYS[5], KEYS[1], id)
if not m then return false end
if identity ~= '' and not owns(rec, identity, ARGV[4]) then return false end
local rank, score = CODE_UNRANKED, false
if rec.st == ST_WAITING then
  if rec.v == 2 then
    redis.call('HSET', skey(KEYS[5], m), m, ARGV[3])
  else
    redis.call('ZADD', KEYS[3], 'XX', ARGV[3], m)
  end
  rank = redis.call('ZRANK', KEYS[2], m) or CODE_UNRANKED
  score = redis.call('ZSCORE', KEYS[2], m) or false
end
return {raw, rank, redis.call('ZCARD', KEYS[2]), redis.call('HGET', KEYS[4], 'rate') or '0', score}
