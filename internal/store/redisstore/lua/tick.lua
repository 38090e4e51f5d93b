-- tick: one admission step. Purges tickets that ended before the grace
-- period, reclaims expired slots, drops abandoned waiters, then admits up to
-- min(batch budget left in this tick, free capacity) from the head. Every
-- kind of removal is bounded per tick, so a tick stays short however many
-- ghosts piled up; the rest go in the next ticks.
-- Abandonment: the head is checked exactly as it is admitted; the rest of
-- the line is swept from a cursor (stats sw, a rank in q), round-robin, at
-- most 128 waiters kept (queue.SweepKeep) and max_scan dropped a tick: a
-- line that short is swept whole each tick, a longer one drops a silent
-- waiter within one sweep of the line (length / 128 ticks) after
-- abandon_after_s, never before. The sweep starts over
-- at the first waiter who entered too recently to be silent that long.
-- A waiter's sign of life is the latest of the servers' latest snapshots
-- that hold it (present.lua) and of its own (its entry, a read, alive.lua's;
-- the s: buckets): the snapshots are read first, its own only when none
-- taken within abandon_after_s holds it (a snapshot older than that saves
-- nobody; one older than that and 10 minutes is deleted).
-- Records are read and written once per bucket a step touches (HMGET,
-- HSET), not once per ticket.
-- Records, members and bucketed keys: record.lua (prepended).
-- KEYS[1] q        ZSET waiting members scored by seq
-- KEYS[2] seen     ZSET waiting members scored by last sign of life (ms) (before)
-- KEYS[3] active   ZSET admitted members scored by deadline (ms): expiry, or sooner (window)
-- KEYS[4] tickets  HASH ticket member -> record (before)
-- KEYS[5] budget   HASH s = start (ms) of the current tick, u = admissions used in it,
--   h = slots held after a data loss until hu (ms) (restore.lua)
-- KEYS[6] stats    HASH counters and the measured rate
-- KEYS[7] admits   ZSET admission log of the last minute, for the rate: members
--   <ms>:<count>:o<slots held right after>:<first id> (enter.lua's fast track too)
-- KEYS[8] ended    ZSET ended members scored by end time (ms)
-- KEYS[9] visitors HASH identity -> ticket member (before)
-- KEYS[10] log     STREAM the change log (positions)
-- KEYS[11] base    the room's key base: <base>t:*, s:*, v:* (same slot)
-- KEYS[12] present HASH server -> "<taken (ms)>:<lo>:<bytes>": the servers' snapshots of
--   their open connections, bitmaps of seqs in <present>:<server> (present.lua)
-- ARGV[1] now (ms)  ARGV[2] interval: the batch interval (ms)  ARGV[3] batch_size  ARGV[4] capacity
-- ARGV[5] abandon_before (ms: waiters last seen before this are gone)
-- ARGV[6] paused (1/0)  ARGV[7] ttl: the session ttl (ms)  ARGV[8] max_scan: most removals of each kind per tick
-- ARGV[9] rate: the configured rate (per s)  ARGV[10] channel: the event channel
-- ARGV[11] purge_before (ms: tickets that ended before this are deleted)
-- ARGV[12] window: the arrival window (ms; 0: off): an admitted slot's score in active is
--   its deadline, orderable + this window until its visitor arrives
--   (arrive.lua), never past its expiry; one reclaimed before its expiry
--   lapsed: no_show (never arrived) or idle (arrived, then went quiet).
--   Negative: arrivals could not be seen (degraded mode, and a while
--   after): a slot due before its expiry gets now + |window| instead
-- ARGV[13] unarrived: the most unarrived slots one client network may hold
--   (queue.UnarrivedLimit; 0: no limit, none counted): the admission passes
--   over a network's waiters while it holds that many (they keep their
--   places and signs of life), at most max_scan a tick, and admits the rest
--   in turn. Networks and counts: record.lua's unarrived.
-- ARGV[14..] jitters: one (ms) per admission slot, at least batch size of them
-- ARGV[14+size..] draws: a random line's, one per slot, in [0, 2^48): absent for FIFO
-- Returns {reclaimed, abandoned, purged, no-shows, idle, then for each
-- admitted ticket: id, ms waited}.
local now, interval, size = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local capacity, abandon_before = tonumber(ARGV[4]), tonumber(ARGV[5])
local paused, ttl, maxscan = ARGV[6] == '1', tonumber(ARGV[7]), tonumber(ARGV[8])
local window, limit = tonumber(ARGV[12]), tonumber(ARGV[13])
local hold = window < 0 -- while arrivals cannot be seen: lapse nobody early
if hold then window = -window end
local base = KEYS[11]
local removed = {} -- scores taken out of q (positions)

-- fetch reads field m of key keyof(base, m) for the members at idx, one
-- HMGET per key; returns the values by index (nil: none).
local function fetch(keyof, members, idx)
  local out, groups, order, keys = {}, {}, {}, {}
  for _, i in ipairs(idx) do
    local b = math.floor(tonumber(members[i]) / 32)
    local k = keys[b]
    if not k then k = keyof(base, members[i]); keys[b] = k end
    if not groups[k] then groups[k] = {}; order[#order + 1] = k end
    local g = groups[k]
    g[#g + 1] = i
  end
  for _, k in ipairs(order) do
    local g, fields = groups[k], {}
    for j, i in ipairs(g) do fields[j] = members[i] end
    local vals = redis.call('HMGET', k, unpack(fields))
    for j, i in ipairs(g) do
      if vals[j] then out[i] = vals[j] end
    end
  end
  return out
end

-- records loads the records of members (seqs from the t: buckets in one
-- HMGET per bucket, others from the tickets hash of before): rec, key and
-- raw by index; a member without one has none.
local function records(members)
  local recs, keys, raws, idx, old = {}, {}, {}, {}, {}
  for i, m in ipairs(members) do
    if isseq(m) then idx[#idx + 1] = i else old[#old + 1] = i end
  end
  local got = fetch(tkey, members, idx)
  for _, i in ipairs(idx) do
    if got[i] then
      raws[i], recs[i], keys[i] = got[i], decode(got[i]), tkey(base, members[i])
    else
      old[#old + 1] = i
    end
  end
  for _, i in ipairs(old) do
    local raw = redis.call('HGET', KEYS[4], members[i])
    if raw then raws[i], recs[i], keys[i] = raw, decode(raw), KEYS[4] end
  end
  return recs, keys, raws
end

-- store writes records back, one HSET per key.
local function store(members, recs, keys, idx)
  local groups, order = {}, {}
  for _, i in ipairs(idx) do
    local k = keys[i]
    if not groups[k] then groups[k] = {}; order[#order + 1] = k end
    local g = groups[k]
    g[#g + 1], g[#g + 2] = members[i], encode(recs[i])
  end
  for _, k in ipairs(order) do redis.call('HSET', k, unpack(groups[k])) end
end

-- entered is a record's entry time, from the record's fixed place (no
-- decode), or nil.
local function entered(raw)
  if not raw then return nil end
  local b = string.byte(raw, 1)
  if b < 65 or b > 90 then return nil end
  return tonumber(string.sub(raw, 2, 9), 36)
end

-- seqof is the seq a member names: itself, or the first 12 digits of an id
-- from before (present.lua sets the bits of ids by those).
local function seqof(m)
  if isseq(m) then return tonumber(m) end
  if #m == 32 then
    local d = string.match(string.sub(m, 1, 12), '^%d+$')
    if d then return tonumber(d) end
  end
  return nil
end

-- snapshots are the servers' latest snapshots taken at or after
-- abandon_before: {bitmap key, taken, lo}; read once a tick, when needed.
local snaps
local function snapshots()
  if snaps then return snaps end
  snaps = {}
  local all = redis.call('HGETALL', KEYS[12])
  local drop = math.min(abandon_before, now - 600000)
  for i = 1, #all, 2 do
    local at, lo, len = string.match(all[i + 1], '^(%d+):(%d+):(%d+)$')
    at, lo, len = tonumber(at), tonumber(lo), tonumber(len)
    if not at or at < drop then
      redis.call('HDEL', KEYS[12], all[i])
      redis.call('DEL', KEYS[12] .. ':' .. all[i])
    elseif at >= abandon_before then
      snaps[#snaps + 1] = {KEYS[12] .. ':' .. all[i], at, lo, len}
    end
  end
  return snaps
end

-- present sets out[i] to the time of the latest snapshot holding members[i],
-- for i in idx, where later than out[i]. A bitmap of up to 64 KiB (half a
-- million seqs) is read whole once a tick (GET: one command per snapshot,
-- however many chunks of the line the tick looks at); a longer one one
-- GETRANGE per call over the members' seqs (GETBIT each when they are
-- spread wide).
local function present(members, idx, out)
  if #idx == 0 then return end
  local ss = snapshots()
  if #ss == 0 then return end
  local seqs, lo, hi = {}, nil, nil
  for _, i in ipairs(idx) do
    local n = seqof(members[i])
    if n then
      seqs[i] = n
      if not lo or n < lo then lo = n end
      if not hi or n > hi then hi = n end
    end
  end
  if not lo then return end
  for _, sn in ipairs(ss) do
    local base_seq = sn[3]
    if hi >= base_seq then
      local b0 = math.floor((math.max(lo, base_seq) - base_seq) / 8)
      local b1 = math.floor((hi - base_seq) / 8)
      local bytes = nil
      if sn[4] <= 65536 then
        if not sn.whole then sn.whole = redis.call('GET', sn[1]) or '' end
        bytes, b0 = sn.whole, 0
      elseif b1 - b0 < 65536 then
        bytes = redis.call('GETRANGE', sn[1], b0, b1)
      end
      for _, i in ipairs(idx) do
        local n = seqs[i]
        if n and n >= base_seq and not (out[i] and out[i] >= sn[2]) then
          local off = n - base_seq
          local on
          if bytes then
            local j = math.floor(off / 8) - b0 + 1
            local byte = string.byte(bytes, j) or 0
            on = math.floor(byte / 2 ^ (7 - off % 8)) % 2 == 1
          else
            on = redis.call('GETBIT', sn[1], off) == 1
          end
          if on then out[i] = sn[2] end
        end
      end
    end
  end
end

-- has_seen: does the seen set from before exist? Asked once a tick (a
-- set emptied meanwhile answers nothing to ZMSCORE or ZREM either).
local seen_exists
local function has_seen()
  if seen_exists == nil then seen_exists = redis.call('EXISTS', KEYS[2]) == 1 end
  return seen_exists
end

-- seen_of is a sign of life of each member at or after abandon_before if
-- it showed one (nil: none kept but its entry): the servers' snapshots
-- first (open connections: one GETRANGE per snapshot), then for the rest
-- the s: buckets and the seen set from before.
local function seen_of(members)
  local out, all, ours, missing = {}, {}, {}, {}
  for i = 1, #members do all[i] = i end
  present(members, all, out)
  for i, m in ipairs(members) do
    if not out[i] then
      if isseq(m) then ours[#ours + 1] = i else missing[#missing + 1] = i end
    end
  end
  local got = fetch(skey, members, ours)
  for _, i in ipairs(ours) do
    if got[i] then out[i] = tonumber(got[i]) else missing[#missing + 1] = i end
  end
  if #missing > 0 and has_seen() then
    local ms = {}
    for j, i in ipairs(missing) do ms[j] = members[i] end
    for j, v in ipairs(redis.call('ZMSCORE', KEYS[2], unpack(ms))) do
      if v then out[missing[j]] = tonumber(v) end
    end
  end
  return out
end

-- unseen forgets the members' signs of life (they left the line): one
-- HDEL per s: bucket.
local function unseen(members)
  local groups, order = {}, {}
  for _, m in ipairs(members) do
    if isseq(m) then
      local k = skey(base, m)
      if not groups[k] then groups[k] = {}; order[#order + 1] = k end
      local g = groups[k]
      g[#g + 1] = m
    end
  end
  for _, k in ipairs(order) do redis.call('HDEL', k, unpack(groups[k])) end
  if has_seen() then redis.call('ZREM', KEYS[2], unpack(members)) end
end

-- finish marks tickets ended; their records stay for the grace period so
-- their owners can still read why. Removals go in one call per key (unpack
-- takes up to 8000 values, far above ARGV[8]).
local function finish(members, reason, recs, keys)
  if #members == 0 then return end
  if not recs then recs, keys = records(members) end
  local idx, z = {}, {}
  for i, m in ipairs(members) do
    local rec = recs[i]
    if rec then
      rec.st, rec.r = ST_EXPIRED, type(reason) == 'table' and reason[i] or reason
      idx[#idx + 1] = i
      z[#z + 1] = now
      z[#z + 1] = m
    end
  end
  store(members, recs, keys, idx)
  if #z > 0 then redis.call('ZADD', KEYS[8], unpack(z)) end
end

-- Purge first: deleting frees memory, so a Redis at maxmemory gets room back.
local purge = redis.call('ZRANGEBYSCORE', KEYS[8], '-inf', '(' .. ARGV[11], 'LIMIT', 0, maxscan)
if #purge > 0 then
  local recs, keys = records(purge)
  local nb, vgroups, vorder, dels, dorder = nil, {}, {}, {}, {}
  for i, m in ipairs(purge) do
    local rec = recs[i]
    if rec then
      if rec.v == 2 then
        -- vdrop's rule, one HMGET and HDEL per visitors bucket.
        nb = nb or tonumber(redis.call('HGET', KEYS[6], 'vb')) or 1
        local f = vfield(rec.i)
        local k = vkey(base, f, nb)
        if not vgroups[k] then vgroups[k] = {}; vorder[#vorder + 1] = k end
        local g = vgroups[k]
        g[#g + 1] = {f, m}
      elseif rec.i and redis.call('HGET', KEYS[9], rec.i) == m then
        redis.call('HDEL', KEYS[9], rec.i)
      end
      local k = keys[i]
      if not dels[k] then dels[k] = {}; dorder[#dorder + 1] = k end
      local d = dels[k]
      d[#d + 1] = m
    end
  end
  for _, k in ipairs(vorder) do
    local g, fs, gone = vgroups[k], {}, {}
    for j, e in ipairs(g) do fs[j] = e[1] end
    local vals = redis.call('HMGET', k, unpack(fs))
    for j, e in ipairs(g) do
      if vals[j] == e[2] then gone[#gone + 1] = e[1] end
    end
    if #gone > 0 then redis.call('HDEL', k, unpack(gone)) end
  end
  for _, k in ipairs(dorder) do redis.call('HDEL', k, unpack(dels[k])) end
  local ngroups, norder = {}, {}
  for _, m in ipairs(purge) do
    local nk = netkey(base, m)
    if not ngroups[nk] then ngroups[nk] = {}; norder[#norder + 1] = nk end
    local g = ngroups[nk]
    g[#g + 1] = m
  end
  for _, nk in ipairs(norder) do redis.call('HDEL', nk, unpack(ngroups[nk])) end
  redis.call('ZREM', KEYS[8], unpack(purge))
  redis.call('HINCRBY', KEYS[6], 'purged', #purge) -- visitors buckets (vgrow)
end

-- A slot's score is its deadline: a score short of the record's expiry is
-- a slot that lapsed (arrival window, idle), not one that ran out.
local due = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'WITHSCORES', 'LIMIT', 0, maxscan)
local expired, no_shows, idles = {}, 0, 0
if #due > 0 then
  local members, deadline = {}, {}
  for i = 1, #due, 2 do
    members[#members + 1] = due[i]
    deadline[#members] = tonumber(due[i + 1])
  end
  local recs, keys = records(members)
  local whys, erecs, ekeys, held = {}, {}, {}, {}
  for i, m in ipairs(members) do
    local rec, why = recs[i], REASON_RECLAIMED
    local x = rec and rec.x and rec.x ~= '' and tonumber(rec.x)
    if x and deadline[i] < x then
      why = rec.ar and REASON_IDLE or REASON_NO_SHOW
    end
    if why ~= REASON_RECLAIMED and hold then
      -- Arrivals could not be seen (degraded): a new deadline, not a lapse.
      held[#held + 1], held[#held + 2] = math.min(x, now + window), m
    else
      if why == REASON_IDLE then idles = idles + 1 elseif why == REASON_NO_SHOW then no_shows = no_shows + 1 end
      expired[#expired + 1] = m
      whys[#expired], erecs[#expired], ekeys[#expired] = why, rec, keys[i]
    end
  end
  if #held > 0 then redis.call('ZADD', KEYS[3], 'XX', unpack(held)) end
  if #expired > 0 then
    redis.call('ZREM', KEYS[3], unpack(expired))
    finish(expired, whys, erecs, ekeys)
    redis.call('HINCRBY', KEYS[6], 'expired_total', #expired)
  end
  if no_shows > 0 then redis.call('HINCRBY', KEYS[6], 'no_show_total', no_shows) end
  if idles > 0 then redis.call('HINCRBY', KEYS[6], 'idle_total', idles) end
end

-- The silent: from before, by the seen set's order; then the sweep.
local gone = {}
if has_seen() then gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. abandon_before, 'LIMIT', 0, maxscan) end
local total = redis.call('ZCARD', KEYS[1])
if total > 0 then
  local cursor = tonumber(redis.call('HGET', KEYS[6], 'sw')) or 0
  if cursor >= total then cursor = 0 end
  local was = {}
  for _, m in ipairs(gone) do was[m] = true end
  -- q is in seq order past the drawn places, and seqs in order of entry: a
  -- waiter without a sign of life who entered after abandon_before means
  -- nobody behind it can be silent that long; the sweep starts over. Read
  -- in chunks, so a young line costs one chunk.
  -- At most 128 kept (queue.SweepKeep) and maxscan dropped a tick.
  local examined, dropped, young, at_rank = 0, 0, false, cursor
  while examined - dropped < 128 and #gone < maxscan and not young do
    local batch = redis.call('ZRANGE', KEYS[1], at_rank, at_rank + 63)
    if #batch == 0 then break end
    local seen = seen_of(batch)
    for i, m in ipairs(batch) do
      if #gone >= maxscan or examined - dropped >= 128 then break end
      examined = examined + 1
      local at = seen[i]
      if not at and isseq(m) then
        at = entered(redis.call('HGET', tkey(base, m), m))
        if at and at >= abandon_before then young = true break end
      end
      if at and at < abandon_before and not was[m] then
        gone[#gone + 1] = m
        dropped = dropped + 1
      end
    end
    at_rank = at_rank + #batch
  end
  local sw = cursor + examined - dropped
  if young then sw = 0 end
  if sw ~= cursor then redis.call('HSET', KEYS[6], 'sw', sw) end
end
if #gone > 0 then
  for _, sc in ipairs(redis.call('ZMSCORE', KEYS[1], unpack(gone))) do
    if sc then removed[#removed + 1] = sc end -- positions
  end
  unseen(gone)
  redis.call('ZREM', KEYS[1], unpack(gone))
  finish(gone, REASON_ABANDONED)
end
local abandoned = #gone

-- pop takes the next count waiters as ZPOPMIN's {member, score, …}: the head,
-- or in a random line the waiter at rank draw % waiting for each draw (the
-- draws come from crypto/rand in Go, not math.random), until they run out.
local random, drawn = #ARGV >= 13 + 2 * size, 0
local function pop(count)
  if not random then return redis.call('ZPOPMIN', KEYS[1], count) end
  local out = {}
  while #out < 2 * count and drawn < size do
    local left = redis.call('ZCARD', KEYS[1])
    if left == 0 then break end
    drawn = drawn + 1
    local rank = tonumber(ARGV[13 + size + drawn]) % left
    local m = redis.call('ZRANGE', KEYS[1], rank, rank, 'WITHSCORES')
    redis.call('ZREM', KEYS[1], m[1])
    out[#out + 1] = m[1]
    out[#out + 1] = m[2]
  end
  return out
end

local admitted, waits = {}, {}
if not paused then
  -- Ticks are compared by their start time, not their number: numbers
  -- counted in a shorter interval outrun any counted in a longer one, so a
  -- change of pace would stop the line.
  local start = now - now % interval
  local b = redis.call('HMGET', KEYS[5], 's', 'u', 'h', 'hu')
  local bs, used = tonumber(b[1]) or -1, tonumber(b[2]) or 0
  if start > bs then bs, used = start, 0 end
  local held = now < (tonumber(b[4]) or 0) and tonumber(b[3]) or 0
  local n = math.min(size - used, capacity - held - redis.call('ZCARD', KEYS[3]))
  -- Ghosts at the head are dropped as they are popped, at most maxscan of
  -- them per tick: the line drains them over several ticks.
  local skipped, ghosts = 0, {}
  -- deferred: the waiters passed over ({score, member, …}: back into q
  -- after the loop, which would pop them again); counts: each network's
  -- unarrived slots, read once a tick and counted up as it admits.
  local deferred, counts = {}, {}
  local function count(net)
    local c = counts[net]
    if not c then c = unarrived(base, net, now); counts[net] = c end
    return c
  end
  while n > 0 and skipped < maxscan do
    -- At most 4000 a pop: unpack below stops near 8000 values, and a batch
    -- may be 10,000.
    local popped = pop(math.min(n, 4000))
    if #popped == 0 then break end
    local members = {}
    for i = 1, #popped, 2 do members[#members + 1] = popped[i] end
    local seen = seen_of(members)
    local recs, keys, raws = records(members)
    local nets = {}
    if limit > 0 then
      local ours, others = {}, {}
      for i, m in ipairs(members) do
        if isseq(m) then ours[#ours + 1] = i else others[#others + 1] = i end
      end
      nets = fetch(netkey, members, ours)
      if #others > 0 then
        local ms = {}
        for j, i in ipairs(others) do ms[j] = members[i] end
        local vals = redis.call('HMGET', base .. 'net', unpack(ms))
        for j, i in ipairs(others) do nets[i] = vals[j] or nil end
      end
    end
    local marked, z, left = {}, {}, {}
    for i, m in ipairs(members) do
      local rec = recs[i]
      local seen_at = seen[i] or entered(raws[i])
      local net, passed = nets[i], false
      if seen_at and seen_at < abandon_before then
        ghosts[#ghosts + 1] = m
        skipped = skipped + 1
      elseif rec and net and #deferred < 2 * maxscan and count(net) >= limit then
        deferred[#deferred + 1], deferred[#deferred + 2], passed = popped[2 * i], m, true
      elseif rec then
        local o = now + tonumber(ARGV[14 + #admitted])
        rec.st, rec.a, rec.o, rec.x = ST_ADMITTED, now, o, o + ttl
        marked[#marked + 1] = i
        local d = o + ttl
        if window > 0 and o + window < d then d = o + window end -- |window| when held
        z[#z + 1], z[#z + 2] = d, m
        if net then
          counts[net] = count(net) + 1
          unarrived_add(base, net, m, d, now)
        end
        admitted[#admitted + 1] = idof(m, rec)
        waits[#waits + 1] = now - tonumber(rec.e)
        n = n - 1
      else
        skipped = skipped + 1 -- no record: nothing to admit
      end
      if not passed then
        left[#left + 1] = m
        removed[#removed + 1] = popped[2 * i] -- positions
      end
    end
    if #left > 0 then unseen(left) end
    store(members, recs, keys, marked)
    for i = 1, #z, 2000 do -- unpack stops near 8000 values
      redis.call('ZADD', KEYS[3], unpack(z, i, math.min(i + 1999, #z)))
    end
  end
  if #deferred > 0 then redis.call('ZADD', KEYS[1], unpack(deferred)) end
  finish(ghosts, REASON_ABANDONED)
  abandoned = abandoned + #ghosts
  if #admitted > 0 then
    redis.call('HSET', KEYS[5], 's', bs, 'u', used + #admitted)
    redis.call('HINCRBY', KEYS[6], 'admitted_total', #admitted)
    redis.call('HINCRBY', KEYS[6], 'win_sum', #admitted)
    local occ = held + redis.call('ZCARD', KEYS[3])
    redis.call('ZADD', KEYS[7], now, now .. ':' .. #admitted .. ':o' .. occ .. ':' .. admitted[1])
    -- Joined in pieces: one concat of a 10,000 batch overflows miniredis's
    -- Lua (embedded mode).
    -- Then the admissions' times (redisstore.parseAdmitted):
    -- "@<now>:<ttl>:<jitter of each, in order>"; a server of the release
    -- before takes it for one more id, of no ticket.
    local parts, jits = {}, {}
    for i = 1, #admitted, 1000 do
      parts[#parts + 1] = table.concat(admitted, ',', i, math.min(i + 999, #admitted))
      jits[#jits + 1] = table.concat(ARGV, ':', 13 + i, 13 + math.min(i + 999, #admitted))
    end
    parts[#parts + 1] = '@' .. ARGV[1] .. ':' .. ARGV[7] .. ':' .. table.concat(jits, ':')
    redis.call('PUBLISH', ARGV[10], table.concat(parts, ','))
  end
end
if abandoned > 0 then redis.call('HINCRBY', KEYS[6], 'abandoned_total', abandoned) end

-- The measured rate: admissions in the last minute over the time they span.
local cutoff = now - 60000
local old = redis.call('ZRANGEBYSCORE', KEYS[7], '-inf', '(' .. cutoff)
if #old > 0 then
  local dropped = 0
  for _, m in ipairs(old) do
    dropped = dropped + tonumber(string.match(m, '^[^:]+:(%d+):'))
  end
  redis.call('ZREMRANGEBYSCORE', KEYS[7], '-inf', '(' .. cutoff)
  redis.call('HINCRBY', KEYS[6], 'win_sum', -dropped)
end
local sum = tonumber(redis.call('HGET', KEYS[6], 'win_sum') or '0')
-- 'rate' falls back to the configured pace for the waiters' estimates;
-- 'measured' is only what was admitted (0 when nobody was), for /stats.
local rate = ARGV[9]
local measured = '0'
local first
if sum > 0 then
  first = redis.call('ZRANGE', KEYS[7], 0, 0, 'WITHSCORES')
  local span = math.max(now - tonumber(first[2]) + interval, interval) / 1000
  rate = tostring(sum / span)
  measured = rate
end
-- A line longer than the free slots moves, past them, only as slots free.
-- Until one has freed in the window (an opening's crowd filling an empty
-- room), its estimates take every slot held to its deadline, not the pace
-- that filled the room. Freed: admitted in the window less what the slots
-- held grew by since its first admission (each entry's o<occ>: slots held
-- right after it; an entry without one, from before this rule, says
-- nothing).
local b = redis.call('HMGET', KEYS[5], 'h', 'hu')
local occ = redis.call('ZCARD', KEYS[3])
if now < (tonumber(b[2]) or 0) then occ = occ + tonumber(b[1]) end
if capacity > 0 and occ + redis.call('ZCARD', KEYS[1]) > capacity then
  local freed = 0
  if first then
    -- Slots held before the window's first admission: the least of its
    -- first millisecond's entries (fast-track ones share it, in any order).
    local before
    for _, e in ipairs(redis.call('ZRANGEBYSCORE', KEYS[7], first[2], first[2])) do
      local n1, o1 = string.match(e, '^[^:]+:(%d+):o(%d+):')
      if not o1 then before = nil; break end
      local b1 = tonumber(o1) - tonumber(n1)
      if not before or b1 < before then before = b1 end
    end
    freed = before and sum - (occ - before) or 1
  end
  if freed <= 0 then
    -- The horizon: the latest deadline held, or a new slot's.
    local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
    local h = ttl
    if window > 0 and window < h then h = window end
    if last[2] then h = math.max(h, tonumber(last[2]) - now) end
    h = math.max(h, interval)
    local slow = capacity / (h / 1000)
    if slow < tonumber(rate) then rate = tostring(slow) end
  end
end
redis.call('HSET', KEYS[6], 'rate', rate, 'measured', measured)
log_changes(KEYS[1], KEYS[6], KEYS[10], {}, removed, total - #removed) -- positions

local out = {#expired, abandoned, #purge, no_shows, idles}
for i, id in ipairs(admitted) do
  out[#out + 1] = id
  out[#out + 1] = waits[i]
end
return out
