-- draw: a scheduled opening's draw, once per opening whichever server runs
-- it. The order was shuffled by the caller (crypto/rand); this script checks
-- that it is exactly the pre-queue, puts it ahead of everyone in the line
-- and keeps the record, all in one atomic step. When this opening was drawn
-- already it only moves late pre-queue entries to the back of the line.
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] pre      ZSET the pre-queue: ticket ids scored by seq
-- KEYS[2] q        ZSET waiting members scored by seq (drawn ones below every seq)
-- KEYS[3] seen     ZSET waiting members scored by last sign of life (ms) (before)
-- KEYS[4] tickets  HASH ticket member -> record (before)
-- KEYS[5] draw     HASH the last draw: opens, at (ms), drawn, server, hash
-- KEYS[6] stats    HASH counters (logn: the change log's count)
-- KEYS[7] log      STREAM the change log (positions)
-- KEYS[8] base     the room's key base: <base>t:*, <base>s:*, <base>pren: the
--                  pre-queue's networks, dropped with it, each moved to
--                  <base>n:* with its place (record.lua's netkey; same slot)
-- ARGV[1] opens: the opening (ms)  ARGV[2] now (ms)  ARGV[3] server  ARGV[4] order_hash: SHA-256 of the order
-- ARGV[5] channel: the event channel  ARGV[6] max_moved: most late entries moved per call
-- ARGV[7..] order: the drawn order, every pre-queue ticket id once
-- Returns {1, late moved} when this call drew, {0, late moved} when the
-- opening was drawn before, {CODE_DRAW_STALE, 0} when the order is not the pre-queue.
local now = tonumber(ARGV[2])
local first = 7
local base = KEYS[8]

-- put writes a drawn or late ticket: its record where it is kept, its sign
-- of life (now) beside it; pending writes go in one call per key (flush).
local pending, order = {}, {}
local function put(k, ...)
  if not pending[k] then pending[k] = {}; order[#order + 1] = k end
  local t = pending[k]
  for _, v in ipairs({...}) do t[#t + 1] = v end
end
local function flush()
  for _, k in ipairs(order) do
    if k == KEYS[3] then
      redis.call('ZADD', k, unpack(pending[k]))
    else
      redis.call('HSET', k, unpack(pending[k]))
    end
  end
  pending, order = {}, {}
end
local function place(m, rec, k)
  put(k, m, encode(rec))
  if rec.v == 2 then put(skey(base, m), m, now) else put(KEYS[3], now, m) end
end
-- positions: scores this call put in q, as "lo:hi" runs of consecutive scores
local added, run_lo, run_hi = {}, nil, nil
local function add_score(sc)
  if run_hi and sc == run_hi + 1 then run_hi = sc return end
  if run_lo then added[#added + 1] = run_lo .. ':' .. run_hi end
  run_lo, run_hi = sc, sc
end
local function log_added()
  if run_lo then added[#added + 1] = run_lo .. ':' .. run_hi end
  run_lo, run_hi = nil, nil
  log_changes(KEYS[2], KEYS[6], KEYS[7], added, {})
end

-- Late entries (a server whose settings were stale) join the back of the
-- line by arrival, as any latecomer; bounded per call.
local function late()
  local pre = redis.call('ZRANGE', KEYS[1], 0, tonumber(ARGV[6]) - 1, 'WITHSCORES')
  for i = 1, #pre, 2 do
    local id, seq = pre[i], tonumber(pre[i + 1])
    redis.call('ZREM', KEYS[1], id)
    local net = redis.call('HGET', base .. 'pren', id)
    redis.call('HDEL', base .. 'pren', id)
    local m, rec, _, k = find(base, KEYS[4], id)
    if m then
      if net then redis.call('HSET', netkey(base, m), m, net) end
      redis.call('ZADD', KEYS[2], seq, m)
      add_score(seq) -- positions
      rec.st, rec.p = ST_WAITING, redis.call('ZRANK', KEYS[2], m) + 1
      place(m, rec, k)
    end
  end
  flush()
  return #pre / 2
end

if redis.call('HGET', KEYS[5], 'opens') == ARGV[1] then
  local n = late()
  log_added() -- positions
  if n > 0 then redis.call('PUBLISH', ARGV[5], '*settings') end
  return {0, n}
end

local n = #ARGV - first + 1
if redis.call('ZCARD', KEYS[1]) ~= n then return {CODE_DRAW_STALE, 0} end
-- In chunks: one call per thousand tickets, not one per ticket (unpack
-- takes up to 8000 values).
local chunk = 1000
local once = {}
for c = first, #ARGV, chunk do
  local last = math.min(c + chunk - 1, #ARGV)
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(ARGV, c, last))
  for i = 1, last - c + 1 do
    local id = ARGV[c + i - 1]
    if not scores[i] or once[id] then return {CODE_DRAW_STALE, 0} end
    once[id] = true
  end
end

-- Drawn places go ahead of everyone in the line: scores below its head.
local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local base_score = math.min(tonumber(head[2]) or 1, 1)
for c = first, #ARGV, chunk do
  local last = math.min(c + chunk - 1, #ARGV)
  local qz, nz, norder = {}, {}, {}
  local nets = redis.call('HMGET', base .. 'pren', unpack(ARGV, c, last))
  for i = c, last do
    local k = i - first + 1
    local m, rec, _, rk = find(base, KEYS[4], ARGV[i])
    if m then
      rec.st, rec.p = ST_WAITING, k
      place(m, rec, rk)
      qz[#qz + 1], qz[#qz + 2] = base_score - n - 1 + k, m
      add_score(base_score - n - 1 + k) -- positions
      local net = nets[i - c + 1]
      if net then
        local nk = netkey(base, m)
        if not nz[nk] then nz[nk] = {}; norder[#norder + 1] = nk end
        local t = nz[nk]
        t[#t + 1], t[#t + 2] = m, net
      end
    end
  end
  if #qz > 0 then redis.call('ZADD', KEYS[2], unpack(qz)) end
  for _, nk in ipairs(norder) do redis.call('HSET', nk, unpack(nz[nk])) end
  flush()
end
redis.call('DEL', KEYS[1], base .. 'pren')
log_added() -- positions
redis.call('HSET', KEYS[5], 'opens', ARGV[1], 'at', ARGV[2], 'drawn', n, 'server', ARGV[3], 'hash', ARGV[4])
redis.call('PUBLISH', ARGV[5], '*settings')
return {1, 0}
