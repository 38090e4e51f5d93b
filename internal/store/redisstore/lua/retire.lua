-- retire: move tickets of the compact encoding from before the buckets
-- (lowercase records in the room's single tickets hash, their signs of
-- life in seen, their visitors in the visitors hash) into the buckets as
-- this release's records, keeping their ids, places and identities: the
-- one-shot migration that retires that encoding (records.go). A record
-- kept under a member that is not a seq, or without a 20-hex tail (the
-- JSON records of the release before that, members = ticket ids), cannot
-- keep its id in the buckets: it stays, and ends and is purged as before.
-- Records and bucketed keys: record.lua (prepended).
-- KEYS[1] tickets  HASH ticket member -> record (before)
-- KEYS[2] seen     ZSET waiting members scored by last sign of life (ms) (before)
-- KEYS[3] visitors HASH identity -> ticket member (before)
-- KEYS[4] stats    HASH vb: the number of visitors buckets
-- KEYS[5] base     the room's key base: <base>t:*, s:*, v:* (same slot)
-- ARGV[1..] members: the tickets hash's members to look at
-- Returns {moved, left}: records moved into the buckets, records left.
local base = KEYS[5]
local nb = tonumber(redis.call('HGET', KEYS[4], 'vb')) or 1
local moved, left = 0, 0
for i = 1, #ARGV do
  local m = ARGV[i]
  local raw = redis.call('HGET', KEYS[1], m)
  if raw then
    local rec = decode(raw)
    if rec and rec.v == 1 and isseq(m) and string.find(rec.t, '^%x+$') and #rec.t == 20 then
      local packed = pack(rec.i)
      local nrec = {v = 2, st = rec.st, e = tonumber(rec.e), p = rec.p, t = unhex(rec.t), i = packed,
        r = rec.r, ar = rec.ar}
      if rec.a ~= '' then nrec.a, nrec.o, nrec.x = tonumber(rec.a), tonumber(rec.o), tonumber(rec.x) end
      redis.call('HSET', tkey(base, m), m, encode(nrec))
      redis.call('HDEL', KEYS[1], m)
      local seen = redis.call('ZSCORE', KEYS[2], m)
      if seen then
        if rec.st == ST_WAITING then redis.call('HSET', skey(base, m), m, seen) end
        redis.call('ZREM', KEYS[2], m)
      end
      if redis.call('HGET', KEYS[3], rec.i) == m then
        redis.call('HDEL', KEYS[3], rec.i)
        local f = vfield(packed)
        local vk = vkey(base, f, nb)
        -- An identity's newer ticket (already in the buckets) keeps its entry.
        if not redis.call('HGET', vk, f) then redis.call('HSET', vk, f, m) end
      end
      moved = moved + 1
    else
      left = left + 1
    end
  end
end
return {moved, left}
