-- lease: take or renew a room's admitter lease, so that one server at a time
-- ticks the room. The lease ends at a time on the callers' clock, as the
-- tick budget does. The start of the last tick that admitted anyone stays
-- across holders: a tick is due only an interval after it, so a new holder
-- keeps the pace of the one before.
-- KEYS[1] admitter HASH h = holder, x = end of the lease (ms), t = start of the last admitting tick (ms)
-- ARGV[1] holder  ARGV[2] now (ms)  ARGV[3] ttl: the lease (ms)  ARGV[4] interval: the batch interval (ms)
-- ARGV[5] admitted: start of an admitting tick of the caller (ms), or 0
-- ARGV[6] kept: how long the key stays after the lease ends (ms)
-- Returns {held (1/0), due (1/0), holder, end of the lease (ms), t (ms), previous holder taken over or ''}
local holder, now, ttl = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local interval, admitted, keep = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local l = redis.call('HMGET', KEYS[1], 'h', 'x', 't')
local h, x, t = l[1], tonumber(l[2]) or 0, tonumber(l[3]) or 0
-- An admission happened whoever holds the lease now.
if admitted > t then t = admitted end
if h and h ~= holder and x > now then
  if t > (tonumber(l[3]) or 0) then redis.call('HSET', KEYS[1], 't', t) end
  return {0, 0, h, x, t, ''}
end
local previous = ''
if h and h ~= holder then previous = h end
x = now + ttl
redis.call('HSET', KEYS[1], 'h', holder, 'x', x, 't', t)
redis.call('PEXPIRE', KEYS[1], ttl + keep)
local due = 0
if now >= t + interval then due = 1 end
return {1, due, holder, x, t, previous}
