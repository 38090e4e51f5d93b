-- draw: a scheduled opening's draw, once per opening whichever server runs
-- it. The order was shuffled by the caller (crypto/rand); this script checks
-- that it is exactly the pre-queue, puts it ahead of everyone in the line
-- and keeps the record, all in one atomic step. When this opening was drawn
-- already it only moves late pre-queue entries to the back of the line.
-- Records and members: record.lua (prepended).
-- KEYS[1] pre      ZSET the pre-queue: ticket ids scored by seq
-- KEYS[2] q        ZSET waiting members scored by seq (drawn ones below every seq)
-- KEYS[3] seen     ZSET waiting members scored by last sign of life (ms)
-- KEYS[4] tickets  HASH ticket member -> record
-- KEYS[5] draw     HASH the last draw: opens, at (ms), drawn, server, hash
-- KEYS[6] stats    HASH counters (logn: the change log's count)
-- KEYS[7] log      STREAM the change log (positions)
-- ARGV[1] the opening (ms)  ARGV[2] now (ms)  ARGV[3] server  ARGV[4] SHA-256 of the order
-- ARGV[5] event channel  ARGV[6] most late entries moved per call
-- ARGV[7..] the drawn order: every pre-queue ticket id once
-- Returns {1, late moved} when this call drew, {0, late moved} when the
-- opening was drawn before, {-1, 0} when the order is not the pre-queue.
local now = tonumber(ARGV[2])
local first = 7
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
    local m, rec = find(KEYS[4], id)
    if m then
      redis.call('ZADD', KEYS[2], seq, m)
      add_score(seq) -- positions
      redis.call('ZADD', KEYS[3], now, m)
      rec.st, rec.p = 'waiting', redis.call('ZRANK', KEYS[2], m) + 1
      redis.call('HSET', KEYS[4], m, encode(rec))
    end
  end
  return #pre / 2
end

if redis.call('HGET', KEYS[5], 'opens') == ARGV[1] then
  local n = late()
  log_added() -- positions
  if n > 0 then redis.call('PUBLISH', ARGV[5], '*settings') end
  return {0, n}
end

local n = #ARGV - first + 1
if redis.call('ZCARD', KEYS[1]) ~= n then return {-1, 0} end
-- In chunks: one call per thousand tickets, not one per ticket (unpack
-- takes up to 8000 values).
local chunk = 1000
local once = {}
for c = first, #ARGV, chunk do
  local last = math.min(c + chunk - 1, #ARGV)
  local scores = redis.call('ZMSCORE', KEYS[1], unpack(ARGV, c, last))
  for i = 1, last - c + 1 do
    local id = ARGV[c + i - 1]
    if not scores[i] or once[id] then return {-1, 0} end
    once[id] = true
  end
end

-- Drawn places go ahead of everyone in the line: scores below its head.
local head = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local base = math.min(tonumber(head[2]) or 1, 1)
for c = first, #ARGV, chunk do
  local last = math.min(c + chunk - 1, #ARGV)
  -- A ticket's member is its seq, read from its id (record.lua); the
  -- records prove the ids, and an id from before is looked up by find.
  local guess = {}
  for i = c, last do
    local seq = #ARGV[i] == 32 and tonumber(string.match(string.sub(ARGV[i], 1, 12), '^%d+$') or '')
    guess[#guess + 1] = seq and string.format('%.0f', seq) or ARGV[i]
  end
  local raws = redis.call('HMGET', KEYS[4], unpack(guess))
  local recs, qz, sz = {}, {}, {}
  for i = 1, last - c + 1 do
    local id, k = ARGV[c + i - 1], c + i - first
    local m, rec = guess[i], decode(raws[i])
    if not rec or idof(m, rec) ~= id then m, rec = find(KEYS[4], id) end
    if m then
      rec.st, rec.p = 'waiting', k
      recs[#recs + 1], recs[#recs + 2] = m, encode(rec)
      qz[#qz + 1], qz[#qz + 2] = base - n - 1 + k, m
      add_score(base - n - 1 + k) -- positions
      sz[#sz + 1], sz[#sz + 2] = now, m
    end
  end
  if #recs > 0 then
    redis.call('HSET', KEYS[4], unpack(recs))
    redis.call('ZADD', KEYS[2], unpack(qz))
    redis.call('ZADD', KEYS[3], unpack(sz))
  end
end
redis.call('DEL', KEYS[1])
log_added() -- positions
redis.call('HSET', KEYS[5], 'opens', ARGV[1], 'at', ARGV[2], 'drawn', n, 'server', ARGV[3], 'hash', ARGV[4])
redis.call('PUBLISH', ARGV[5], '*settings')
return {1, 0}
