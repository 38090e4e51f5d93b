-- arrive: an admitted ticket's token was shown at checkout (the gate,
-- forward auth, a verify): does it still hold its slot, and if not, why.
-- A slot's score in active is its deadline (tick.lua reclaims it then):
-- the first arrival lifts the arrival window (the deadline becomes the
-- expiry), and with an idle limit each arrival moves the deadline to now +
-- idle + idle / step, never past the expiry, written only when it moves by
-- at least idle / step: a busy visitor costs a write per that long, not one
-- per request (a script that writes nothing replicates nothing), and a
-- quiet one lapses after between idle and idle + idle / step, never sooner
-- (queue.IdleStep). The first arrival also ends the slot's count against
-- its network's unarrived limit (record.lua's unarrived).
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] active (members)  KEYS[2] tickets (before)
-- KEYS[3] base (the room's key base: <base>t:*, n:*, un:*, same slot)
-- ARGV[1] id: the ticket id  ARGV[2] now (ms)  ARGV[3] idle (ms; 0: off)
-- ARGV[4] step (queue.IdleStep)
-- Returns {1, ""} or {0, reason}.
local m, rec, _, k = find(KEYS[3], KEYS[2], ARGV[1])
local now, idle = tonumber(ARGV[2]), tonumber(ARGV[3])
local d = tonumber(redis.call('ZSCORE', KEYS[1], m or ARGV[1]))
if not (d and d > now) then
  if not rec then return {0, 'unknown'} end
  if d then
    if rec.x and rec.x ~= '' and d < tonumber(rec.x) then
      return {0, rec.ar and REASON_IDLE or REASON_NO_SHOW} -- lapsed, not yet ticked
    end
    return {0, REASON_RECLAIMED}
  end
  return {0, rec.r or REASON_RECLAIMED}
end
if not rec or not rec.x or rec.x == '' then return {1, ''} end
local x = tonumber(rec.x)
local want = x
local step = math.floor(idle / tonumber(ARGV[4]))
if idle > 0 then want = math.min(x, now + idle + step) end
if not rec.ar then
  rec.ar = true
  redis.call('HSET', k, m, encode(rec))
  local net = redis.call('HGET', netkey(KEYS[3], m), m)
  if net then redis.call('ZREM', KEYS[3] .. 'un:' .. net, m) end
  if want ~= d then redis.call('ZADD', KEYS[1], 'XX', want, m) end
elseif want ~= d and math.abs(want - d) >= step then
  redis.call('ZADD', KEYS[1], 'XX', want, m)
end
return {1, ''}
