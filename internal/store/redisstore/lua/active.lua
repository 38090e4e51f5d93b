-- active: does an admitted ticket still hold its slot, and if not, why.
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] active (members)  KEYS[2] tickets (before)
-- KEYS[3] base (the room's key base: <base>t:*, same slot)
-- ARGV[1] id: the ticket id  ARGV[2] now (ms)
-- Returns {1, ""} or {0, reason}.
local m, rec = find(KEYS[3], KEYS[2], ARGV[1])
local exp = tonumber(redis.call('ZSCORE', KEYS[1], m or ARGV[1]))
if exp and exp > tonumber(ARGV[2]) then return {1, ''} end
if not rec then return {0, 'unknown'} end
if exp then
  -- The score is the slot's deadline: short of the expiry, it lapsed (arrive.lua).
  if rec.x and rec.x ~= '' and exp < tonumber(rec.x) then return {0, rec.ar and REASON_IDLE or REASON_NO_SHOW} end
  return {0, REASON_RECLAIMED}
end
return {0, rec.r or REASON_RECLAIMED}
