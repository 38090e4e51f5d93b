-- hold: bind an admitted ticket's entry token to the one holder that may use it.
-- Records and bucketed keys: record.lua (prepended).
-- KEYS[1] tickets  HASH ticket member -> record (before)
-- KEYS[2] holder   STRING who holds this ticket's token; expires with the token
-- KEYS[3] base     the room's key base: <base>t:* (same slot)
-- ARGV[1] id: the ticket id  ARGV[2] holder (an identity, e.g. "v:<hash of a visitor cookie>")
-- ARGV[3] ttl: the token's time left (ms)
-- ARGV[4] mode: "owner" (a cookie visitor's token is held by that visitor only;
--   any other by the holder a hand-off bound it to, handoff.lua) or "first"
--   (the first holder, or the owner)
-- ARGV[5] packed: the holder packed (record.lua)
-- Returns 1 when holder may use the token, 0 when it is someone else's.
local m, rec = find(KEYS[3], KEYS[1], ARGV[1])
if not m then return 0 end
local holder = ARGV[2]
if owns(rec, holder, ARGV[5]) then return 1 end
local cookie
if rec.v == 2 then
  cookie = string.sub(rec.i, 1, 1) == 'v' or string.sub(rec.i, 2, 3) == 'v:'
else
  cookie = string.sub(rec.i, 1, 2) == 'v:'
end
if ARGV[4] == 'owner' then
  if cookie then return 0 end
  -- Who presents a copy first binds nothing here: only the owner's hand-off does.
  if redis.call('GET', KEYS[2]) == holder then return 1 end
  return 0
end
if redis.call('SET', KEYS[2], holder, 'NX') then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
  return 1
end
if redis.call('GET', KEYS[2]) == holder then return 1 end
return 0
