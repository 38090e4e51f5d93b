-- enter: give each of a batch of identities its live ticket, or a new one
-- at the back of the line, in the batch's order: as if each had its own
-- call, one after another. A batch shares the room's reads and writes (its
-- counters, the line's size, the line's and the change log's writes, the
-- records of one bucket), which a call of its own would each pay for.
-- Records, members and bucketed keys: record.lua (prepended). A new
-- ticket goes to the buckets (t:, s:, v: under the base); the room's single
-- tickets, seen and visitors keys hold tickets from before (and those of an
-- id that is not ours, from tests), read until they end.
-- KEYS[1] base: the room's key base (its hash tag: one slot). Enter runs
--   for every visitor, and each argument costs Redis its parsing and a Lua
--   string, so the room's keys are not declared one by one but named here
--   from the base, all in the base's slot:
--   visitors HASH identity -> ticket member (before)
--   tickets  HASH ticket member -> record (before)
--   seq      STRING arrival sequence (INCR); also the number of tickets ever entered
--   q        ZSET waiting members scored by seq
--   seen     ZSET waiting members scored by last sign of life (ms) (before)
--   active   ZSET admitted members scored by deadline (ms): expiry, or sooner (ARGV 5)
--   budget   HASH s = start (ms) of the current tick, u = admissions used in it,
--     h = slots held after a data loss until hu (ms) (restore.lua)
--   stats    HASH counters and the measured rate; vonly: the room's first
--     ticket was a bucketed one, so its single visitors hash is not read
--   admits   ZSET admission log of the last minute, for the rate
--   pow:<id> STRING the spent mark of proof-of-work challenge id
--   pre      ZSET the pre-queue of a scheduled opening: ticket ids scored by seq
--   pren     HASH pre-queue ticket id -> its client network (the draw's rounds)
--   un:<network> ZSET a network's unarrived slots (record.lua), and the
--     places' networks in n:* (netkey)
--   log      STREAM the change log (positions)
--   and the buckets t:*, s:*, v:* (record.lua)
-- ARGV[1] enters: the number of enters; then each enter's 20 arguments,
--   EACH below: enter i's argument j is ARGV[1 + 20 * (i - 1) + j].
--   The batch holds no identity twice (the caller's part).
-- Returns 5 values per enter: its ticket id ('' for none), its record,
-- its rank (CODE_UNRANKED, or a refusal: CODE_PROOF_NEEDED,
-- CODE_PROOF_SPENT, CODE_LINE_FULL: codes.go), the number waiting, and the
-- room's rate.
-- EACH[1] identity  EACH[2] tail: the new ticket's tail: 20 random hex digits
--   (or, from tests, any other id, which the ticket is then kept under)
-- EACH[3] now (ms)
-- EACH[4] mode: "line" (the line is on), "open" (activation off), "paused",
--   "open_if_empty" (an adaptive room whose line is closed: in at once unless
--   people still wait), "closed" (the room has ended: only live tickets return),
--   "scheduled" (before the opening: a new place goes to the pre-queue)
-- The admission's settings, read only when a newcomer may be admitted at once:
-- EACH[5] capacity  EACH[6] batch_size  EACH[7] interval: the batch interval (ms)
-- EACH[8] orderable: orderable_at for a ticket admitted at once (ms)
-- EACH[9] ttl: the session ttl (ms)
-- EACH[10] window: the arrival window (ms, 0: off): the slot's score in
--   active is its deadline, orderable + the window until its visitor
--   arrives (tick.lua)
-- EACH[11] proof: "none" (a new place costs nothing), "need" (it costs a
--   solution and none came), or "spend": a checked solution to spend once
-- EACH[12] proof_ttl: with spend, how long the spent mark lives (ms: the
--   challenge's remaining life)  EACH[13] proof_id: the challenge's id
-- EACH[14] max_waiting: a newcomer who would wait in a line this long gets
--   no place (0: no limit)
-- EACH[15] packed: the identity packed (record.lua)  EACH[16] field: its visitors field
-- EACH[17] now36: now in 8 base-36 digits  EACH[18] tail_bytes: the tail as 10 bytes
-- EACH[19] network: the client's network ('' unknown), kept with the place
--   (pren before the opening, netkey's bucket in the line)
-- EACH[20] unarrived: the most unarrived slots a network may hold
--   (queue.UnarrivedLimit; 0: no limit, none counted): one at it does not
--   take the fast track
local base = KEYS[1]
local stats, q, seqkey = base .. 'stats', base .. 'q', base .. 'seq'
local sv = redis.call('HMGET', stats, 'vb', 'rate', 'purged', 'vonly')
local nb, rate, purged = tonumber(sv[1]) or 1, sv[2] or '0', tonumber(sv[3]) or 0
local waiting = redis.call('ZCARD', q)
-- Sized for one enter (a table that grows is rehashed at each power of two).
local out = {false, false, false, false, false}
-- The batch's joiners (the line's scores and members, and the log's seqs)
-- are written once after the loop, and its new records once a bucket (a
-- batch's consecutive seqs share one): nothing in the loop reads them
-- back, a joiner's rank and the line's size are counted here.
local joined_q, added, tk_cur, recs = {false, false}, '', nil, {false, false}
local nq, nr = 0, 0
-- The batch's line places' networks, by netkey: {member, network, …};
-- consecutive seqs share a bucket, so one HSET a bucket.
local nets, norder = {}, {}

for i = 1, tonumber(ARGV[1]) do
  local a = 1 + 20 * (i - 1)
  local identity, tail, nowms, mode = ARGV[a + 1], ARGV[a + 2], ARGV[a + 3], ARGV[a + 4]
  local packed, field = ARGV[a + 15], ARGV[a + 16]
  local now = tonumber(nowms)
  local o = 5 * (i - 1)
  -- repeat ... until true: break ends this enter (Lua 5.1 has no continue).
  repeat
    local vk = vkey(base, field, nb)
    -- The room's single visitors hash holds tickets from before; a room whose
    -- first ticket came after them (stats vonly) has none to look up there.
    local existing = redis.call('HGET', vk, field)
    if not existing and not sv[4] then existing = redis.call('HGET', base .. 'visitors', identity) end
    if existing then
      local rec, _, raw = load(base, base .. 'tickets', existing)
      if rec and owns(rec, identity, packed) and
        (rec.st == ST_WAITING or rec.st == ST_SCHEDULED or (rec.st == ST_ADMITTED and tonumber(rec.x) > now)) then
        local rank = CODE_UNRANKED
        if rec.st == ST_WAITING then
          if rec.v == 2 then
            redis.call('HSET', skey(base, existing), existing, nowms)
          else
            redis.call('ZADD', base .. 'seen', 'XX', nowms, existing)
          end
          rank = redis.call('ZRANK', q, existing) or CODE_UNRANKED
        end
        out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = idof(existing, rec), raw, rank, waiting, rate
        break
      end
    end

    if mode == ADMIT_CLOSED then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = '', '', CODE_UNRANKED, 0, '0'
      break
    end

    -- Line full: checked here, atomically with the place it would take, so
    -- servers entering at once never overshoot; asked before any proof is spent.
    local maxw = tonumber(ARGV[a + 14]) or 0
    if maxw > 0 and mode ~= ADMIT_OPEN and waiting >= maxw then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = '', '', CODE_LINE_FULL, 0, '0'
      break
    end

    local proof = ARGV[a + 11]
    if proof == 'need' then
      out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = '', '', CODE_PROOF_NEEDED, 0, '0'
      break
    end
    if proof == 'spend' then
      if not redis.call('SET', base .. 'pow:' .. ARGV[a + 13], '1', 'NX', 'PX', ARGV[a + 12]) then
        out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = '', '', CODE_PROOF_SPENT, 0, '0'
        break
      end
    end

    -- One INCR a ticket: the tools that measure enters count them.
    local seq = redis.call('INCR', seqkey)
    local s = string.format('%d', seq) -- integer formatting: Lua's tostring goes through printf's float path
    local m, id = s, nil
    local new = #tail == 20
    if new then
      id = string.rep('0', 12 - #s) .. s .. tail
      if seq == 1 then redis.call('HSET', stats, 'vonly', '1') end
    else
      m, id, tail = tail, tail, '' -- not an id of ours (a test's): kept under itself, as before
    end

    -- The newcomer's ticket: its state letter, entry position and the
    -- admission's times (new: base-36 deltas; before: ms).
    local c, pos, times, rank = 'W', '', '||', CODE_UNRANKED
    if mode == ADMIT_SCHEDULED then
      -- Scheduled opening: before it, a new place is in the pre-queue, unranked
      -- until the opening's draw (draw.lua) gives it a random place. The
      -- pre-queue keeps ticket ids: the draw's order is of ids.
      c = 'S'
      redis.call('ZADD', base .. 'pre', s, id)
      if ARGV[a + 19] ~= '' then redis.call('HSET', base .. 'pren', id, ARGV[a + 19]) end
    else
      local network, limit = ARGV[a + 19], tonumber(ARGV[a + 20])
      if network == '' then limit = 0 end
      if network ~= '' then
        local nk = netkey(base, m)
        if not nets[nk] then nets[nk] = {}; norder[#norder + 1] = nk end
        local t = nets[nk]
        t[#t + 1], t[#t + 2] = m, network
      end
      local admit = (mode == ADMIT_OPEN) or (mode == ADMIT_OPEN_IF_EMPTY and waiting == 0)
      local capacity, size, interval, orderable, ttl, window =
        ARGV[a + 5], ARGV[a + 6], ARGV[a + 7], ARGV[a + 8], ARGV[a + 9], ARGV[a + 10]
      if mode == ADMIT_LINE and waiting == 0 then
        -- Fast track: only into an empty line, within capacity and this tick's budget.
        -- As in tick.lua: ticks compared by start time, so a change of pace holds.
        local start = now - now % tonumber(interval)
        local b = redis.call('HMGET', base .. 'budget', 's', 'u', 'h', 'hu')
        local bs, used = tonumber(b[1]) or -1, tonumber(b[2]) or 0
        if start > bs then bs, used = start, 0 end
        local live = redis.call('ZCOUNT', base .. 'active', '(' .. nowms, '+inf')
        if now < (tonumber(b[4]) or 0) then live = live + tonumber(b[3]) end
        if used < tonumber(size) and live < tonumber(capacity) and
          (limit == 0 or unarrived(base, network, now) < limit) then
          redis.call('HSET', base .. 'budget', 's', bs, 'u', used + 1)
          admit = true
        end
      end
      if admit then
        local x = tonumber(orderable) + tonumber(ttl)
        c = 'A'
        if new then
          times = '0|' .. b36(tonumber(orderable) - now) .. '|' .. b36(ttl)
        else
          times = nowms .. '|' .. orderable .. '|' .. num(x)
        end
        local d = x
        if tonumber(window) > 0 then d = math.min(x, tonumber(orderable) + tonumber(window)) end
        redis.call('ZADD', base .. 'active', d, m)
        if limit > 0 then unarrived_add(base, network, m, d, now) end
        redis.call('HINCRBY', stats, 'admitted_total', 1)
        redis.call('HINCRBY', stats, 'win_sum', 1)
        -- Slots held now, this one's included (tick.lua's o<occ>).
        local occ = redis.call('ZCOUNT', base .. 'active', '(' .. nowms, '+inf')
        local hb = redis.call('HMGET', base .. 'budget', 'h', 'hu')
        if now < (tonumber(hb[2]) or 0) then occ = occ + tonumber(hb[1]) end
        redis.call('ZADD', base .. 'admits', nowms, nowms .. ':1:o' .. occ .. ':' .. m)
      else
        -- The newest seq is the highest score in the line (drawn places sit below
        -- its head), so the newcomer's rank is the count before it.
        -- A new ticket's sign of life is its entry time (record.lua): none kept.
        joined_q[nq + 1], joined_q[nq + 2], nq = s, m, nq + 2 -- strings: redis.call would format numbers
        if added == '' then added = s else added = added .. ',' .. s end
        if not new then redis.call('ZADD', base .. 'seen', nowms, m) end
        rank, waiting = waiting, waiting + 1
        pos = string.format('%d', waiting) -- entry position, for the progress bar
      end
    end

    -- The record, from the arguments' own strings, with no reason; kept
    -- with the identity's visitors entry (now: a later enter of the batch
    -- may split its bucket).
    local raw
    if new then
      raw = c .. ARGV[a + 17] .. pos .. '|' .. times .. '||' .. ARGV[a + 18] .. packed
      local tk = tkey(base, m)
      if tk ~= tk_cur then
        if tk_cur then redis.call('HSET', tk_cur, unpack(recs, 1, nr)); nr = 0 end
        tk_cur = tk
      end
      recs[nr + 1], recs[nr + 2], nr = m, raw, nr + 2
      if redis.call('HSET', vk, field, m) == 1 then nb = vgrow(base, stats, nb, seq - purged) end
    else
      raw = string.lower(c) .. tail .. '|' .. s .. '|' .. nowms .. '|' .. pos .. '|' .. times .. '||' .. identity
      redis.call('HSET', base .. 'tickets', m, raw)
      redis.call('HSET', base .. 'visitors', identity, m)
      redis.call('HDEL', stats, 'vonly') -- the single visitors hash is in use again
    end
    out[o + 1], out[o + 2], out[o + 3], out[o + 4], out[o + 5] = id, raw, rank, waiting, rate
  until true
end

if tk_cur then redis.call('HSET', tk_cur, unpack(recs, 1, nr)) end
for _, nk in ipairs(norder) do redis.call('HSET', nk, unpack(nets[nk])) end
if nq > 0 then
  redis.call('ZADD', q, unpack(joined_q, 1, nq))
  log_changes(q, stats, base .. 'log', added, '', waiting) -- positions
end
return out
