-- places: does identity hold a live place, and may its client bucket take one more?
-- A bucket's set names the identities whose places it holds, each scored by the
-- deadline of its claim: a claim that never became a place lapses then, and a
-- place that ended (abandoned, reclaimed, completed, left) stops counting;
-- a no-show counts until its session would have ended.
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] visitors HASH identity -> ticket member (before)
-- KEYS[2] tickets  HASH ticket member -> record (before)
-- KEYS[3] places   ZSET identities whose places the bucket holds, by claim deadline (ms)
-- KEYS[4] stats    HASH vb: the number of visitors buckets
-- KEYS[5] base     the room's key base: <base>t:*, <base>v:* (same slot)
-- ARGV[1] identity  ARGV[2] now (ms)  ARGV[3] limit (0: claim nothing)
-- ARGV[4] window: the claim window (ms)  ARGV[5] life: of the set after its last claim (ms)
-- Returns 0 when identity holds a live place already (nothing is counted),
-- 1 when it may take one (claimed), CODE_PLACES_FULL when the bucket holds limit places.
local identity, now, limit = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local window = tonumber(ARGV[4])

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

-- A member counts while its place lives, or, until its claim's deadline,
-- while the claimed place has not come yet (a place that came and ended
-- entered after the claim was made).
local function counts(who, deadline)
  local rec = record(who)
  if counted(rec) then return true end
  if rec ~= nil and tonumber(rec.e) >= deadline - window then return false end
  return deadline > now
end

if live(record(identity)) then return 0 end
if limit <= 0 then return 1 end
if redis.call('ZCARD', KEYS[3]) >= limit then
  -- Only a full bucket is swept, so a claim costs O(limit) at most.
  local members = redis.call('ZRANGE', KEYS[3], 0, -1, 'WITHSCORES')
  local held = 0
  for i = 1, #members, 2 do
    local who = members[i]
    if who ~= identity and counts(who, tonumber(members[i + 1])) then
      held = held + 1
    else
      redis.call('ZREM', KEYS[3], who)
    end
  end
  if held >= limit then return CODE_PLACES_FULL end
end
redis.call('ZADD', KEYS[3], now + window, identity)
redis.call('PEXPIRE', KEYS[3], ARGV[5])
return 1
