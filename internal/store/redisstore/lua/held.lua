-- held: how many live places does a client bucket hold? ZCARD of its set
-- (places.lua), after rechecking the sweep members checked least recently:
-- one whose place ended goes, one whose place lives is scored now (checked
-- now), one whose claim is still pending stays. The count may include places
-- that ended since their last check, never miss a live one; a set of n is
-- rechecked whole every n/sweep calls, and a claim refused for its price
-- rechecks all of it (places.lua).
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] visitors HASH identity -> ticket member (before)
-- KEYS[2] tickets  HASH ticket member -> record (before)
-- KEYS[3] places   ZSET identities whose places the bucket holds, by claim
--                  deadline or, once seen live, the last check (ms)
-- KEYS[4] stats    HASH vb: the number of visitors buckets
-- KEYS[5] base     the room's key base: <base>t:*, <base>v:* (same slot)
-- ARGV[1] now (ms)  ARGV[2] window: the claim window (ms)  ARGV[3] sweep: members rechecked
-- Returns the number of places held.
local now, window, sweep = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])

local nb = tonumber(redis.call('HGET', KEYS[4], 'vb')) or 1
local function record(who)
  local packed = pack(who)
  local f = vfield(packed)
  local m = redis.call('HGET', vkey(KEYS[5], f, nb), f) or redis.call('HGET', KEYS[1], who)
  if not m then return nil end
  local rec = load(KEYS[5], KEYS[2], m)
  if rec and owns(rec, who, packed) then return rec end
  return nil
end

local function live(rec)
  return rec ~= nil and (rec.st == ST_WAITING or rec.st == ST_SCHEDULED or (rec.st == ST_ADMITTED and tonumber(rec.x) > now))
end

-- A no-show counts until its session would have ended (its expiry, or the
-- purge of its record): a squatter's place that lapsed unused still prices
-- its network's next one, as if it had been held (queue.PowPrice).
local function counted(rec)
  return live(rec) or (rec ~= nil and rec.st == ST_EXPIRED and rec.r == REASON_NO_SHOW and (tonumber(rec.x) or 0) > now)
end

local members = redis.call('ZRANGE', KEYS[3], 0, sweep - 1, 'WITHSCORES')
for i = 1, #members, 2 do
  local who, score = members[i], tonumber(members[i + 1])
  local rec = record(who)
  if counted(rec) then
    if score <= now then redis.call('ZADD', KEYS[3], 'XX', now, who) end
  elseif (rec ~= nil and tonumber(rec.e) >= score - window) or score <= now then
    redis.call('ZREM', KEYS[3], who)
  end
end
return redis.call('ZCARD', KEYS[3])
