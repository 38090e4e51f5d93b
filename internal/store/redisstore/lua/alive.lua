-- alive: the open sockets' sign of life, for many waiters at once (one call
-- per room and server and interval, whatever the number of waiters). Only
-- waiters still in the line: an admitted or gone ticket has no sign of life
-- to update, and none is made for it.
-- Members and bucketed keys: record.lua (prepended).
-- KEYS[1] seen  ZSET waiting members scored by last sign of life (ms) (before)
-- KEYS[2] base  the room's key base: <base>s:* (same slot)
-- KEYS[3] q     ZSET waiting members scored by seq
-- ARGV[1] now (ms)  ARGV[2..] members: seqs, and ids for tickets from before
-- Returns the number of signs of life set in the s: buckets.
local now = ARGV[1]
local in_line = redis.call('ZMSCORE', KEYS[3], unpack(ARGV, 2))
local groups, order, all = {}, {}, {}
for i = 2, #ARGV do
  local m = ARGV[i]
  if in_line[i - 1] and isseq(m) then
    local k = skey(KEYS[2], m)
    if not groups[k] then groups[k] = {}; order[#order + 1] = k end
    local g = groups[k]
    g[#g + 1], g[#g + 2] = m, now
  end
  all[#all + 1], all[#all + 2] = now, m
end
local n = 0
for _, k in ipairs(order) do
  redis.call('HSET', k, unpack(groups[k]))
  n = n + #groups[k] / 2
end
if #all > 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('ZADD', KEYS[1], 'XX', unpack(all))
end
return n
