-- alive: the open sockets' sign of life, for many waiters at once (one call
-- per room and server and interval, whatever the number of waiters). Only
-- waiters still in the line: an admitted or gone ticket has no sign of life
-- to update, and none is made for it.
-- Members and bucketed keys: record.lua (prepended).
-- KEYS[1] seen  ZSET waiting members scored by last sign of life (ms) (before)
-- KEYS[2] base  the room's key base: <base>s:* (same slot)
-- ARGV[1] now (ms)  ARGV[2..] members: seqs, and ids for tickets from before
-- Returns the number of signs of life updated in the s: buckets.
local now = ARGV[1]
local groups, order, all = {}, {}, {}
for i = 2, #ARGV do
  local m = ARGV[i]
  if isseq(m) then
    local k = skey(KEYS[2], m)
    if not groups[k] then groups[k] = {}; order[#order + 1] = k end
    local g = groups[k]
    g[#g + 1] = m
  end
  all[#all + 1], all[#all + 2] = now, m
end
local n = 0
for _, k in ipairs(order) do
  local fields = groups[k]
  local have, set = redis.call('HMGET', k, unpack(fields)), {}
  for j, v in ipairs(have) do
    if v then set[#set + 1], set[#set + 2] = fields[j], now end
  end
  if #set > 0 then
    redis.call('HSET', k, unpack(set))
    n = n + #set / 2
  end
end
if #all > 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('ZADD', KEYS[1], 'XX', unpack(all))
end
return n
