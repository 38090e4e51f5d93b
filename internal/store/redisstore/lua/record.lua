-- record: the ticket record's codec and the room's bucketed keys, prepended
-- to every script that reads or writes records (scripts.go).
--
-- A ticket's member in q, active, ended and the buckets is its seq in
-- decimal; its id is that seq zero-padded to 12 digits, then a 20-hex random
-- tail kept in the record (the id finds the record, the tail proves the id).
-- Bucketed keys (built here from the room's key base, KEYS "base": they
-- carry the room's hash tag, so they are in the slot of the declared keys):
--   <base>t:<seq div 32>   HASH seq -> record
--   <base>s:<seq div 32>   HASH seq -> last sign of life (ms) of a waiting ticket;
--                          none yet: its entry time (the record's)
--   <base>v:<n>            HASH visitors field (8 bytes, vfield) -> seq; n by linear
--                          hashing over stats.vb buckets (vgrow)
--   <base>n:<seq div 32>   HASH seq -> the place's client network, for a place in
--                          line with one known (netkey; unarrived below)
-- Up to 128 entries of at most 64 B, Redis keeps each as a listpack: a few
-- bytes of overhead per entry instead of a hash table's ~50. A listpack is
-- scanned on every access: 32 seqs a bucket (and ~12 visitors) keep that
-- short, for ~100 B of key per bucket.
-- A record (uppercase state letter):
--   <S><entered: 8 base-36 digits, ms><entry position>|<admitted - entered>|
--   <orderable - admitted>|<expires - orderable>|<reason letter>|<tail: 10 bytes><identity>
-- S: W waiting, A admitted, S scheduled, E expired; the deltas are base 36
-- (ms), empty until admitted; reason a abandoned, r reclaimed, l left,
-- c completed, n no_show, i idle, or empty; an admitted record's v marks
-- its visitor arrived at checkout (arrive.lua: rec.ar). The tail and the identity go last, as bytes: a
-- cookie visitor's identity ("v:" and 32 hex) packed as v and its 16 bytes,
-- any other as i and itself (redisstore.packIdentity; the caller packs).
-- Cookie visitors' records: waiting ~46 B, admitted ≤ 64 B while the entry
-- position < 10^6, the wait < 25 days and session_ttl_s ≤ 16 h. A longer
-- identity (a user token's) makes its bucket a hash table: correct, not small.
-- A visitors field is 8 bytes: a packed cookie identity's first 8 (already
-- a hash), else the first 8 of the identity's SHA-1 (vfield).
--
-- From the releases before (rolling upgrade), in the room's single keys:
-- tickets HASH member -> record, visitors HASH identity -> member, seen ZSET.
-- Their records are lowercase compact ones
--   <state><tail hex>|<seq>|<entered>|<entry pos>|<admitted>|<orderable>|<expires>|<reason>|<identity>
-- or JSON (member = id, tail ''). They are read there and written back
-- there (rec.v == 1) until they end and are purged.
-- Retirement (redisstore/records.go): servers of this release move the
-- compact ones into the buckets at start (retire.lua); the release after
-- next drops both old encodings.
-- No tables or number formatting up here: this part runs on every call.

local function b36(n)
  local digits = '0123456789abcdefghijklmnopqrstuvwxyz'
  n = math.floor(tonumber(n))
  if n <= 0 then return '0' end
  local s = ''
  while n > 0 do
    local d = n % 36
    s = string.sub(digits, d + 1, d + 1) .. s
    n = (n - d) / 36
  end
  return s
end

local function bucket(m) return string.format('%d', math.floor(tonumber(m) / 32)) end
local function isseq(m) return #m <= 15 and string.find(m, '^%d+$') ~= nil end
local function tkey(base, m) return base .. 't:' .. bucket(m) end
local function skey(base, m) return base .. 's:' .. bucket(m) end
-- netkey holds m's client network (unarrived below): bucketed as t: and s:,
-- a test's member that is not a seq in the room's single net hash.
local function netkey(base, m)
  if isseq(m) then return base .. 'n:' .. bucket(m) end
  return base .. 'net'
end

local function decode(raw)
  if not raw then return nil end
  local b = string.byte(raw, 1)
  if b == 123 then -- '{': a JSON record from before
    local rec = cjson.decode(raw)
    rec.t, rec.v = '', 1
    return rec
  end
  if b >= 65 and b <= 90 then -- uppercase: this release's record
    local c, e, p, a, o, x, r, rest = string.match(raw,
      '^(%u)(%w%w%w%w%w%w%w%w)(%d*)|(%w*)|(%w*)|(%w*)|(%l?)|(.*)$')
    if not c then return nil end
    local st = (c == 'W' and ST_WAITING) or (c == 'A' and ST_ADMITTED) or (c == 'S' and ST_SCHEDULED) or ST_EXPIRED
    local rec = {v = 2, st = st, e = tonumber(e, 36), p = p, t = string.sub(rest, 1, 10), i = string.sub(rest, 11)}
    if r == 'v' then
      rec.ar = true
    elseif r ~= '' then
      rec.r = (r == 'a' and REASON_ABANDONED) or (r == 'r' and REASON_RECLAIMED) or (r == 'l' and REASON_LEFT) or
        (r == 'n' and REASON_NO_SHOW) or (r == 'i' and REASON_IDLE) or REASON_COMPLETED
    end
    if a ~= '' then
      rec.a = rec.e + tonumber(a, 36)
      rec.o = rec.a + tonumber(o, 36)
      rec.x = rec.o + tonumber(x, 36)
    end
    return rec
  end
  local c, t, s, e, p, a, o, x, r, i = string.match(raw,
    '^(%a)(%x*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|(.*)$')
  if not c then return nil end
  if r == '' then r = nil end
  local st = (c == 'w' and ST_WAITING) or (c == 'a' and ST_ADMITTED) or (c == 's' and ST_SCHEDULED) or ST_EXPIRED
  -- Numbers stay strings ('' when unset): encode writes them back as they
  -- are; compare them through tonumber. An admitted one's reason
  -- "arrived" marks its visitor arrived (arrive.lua).
  local ar = r == 'arrived'
  if ar then r = nil end
  return {v = 1, st = st, t = t, s = s, e = e, p = p, a = a, o = o, x = x, r = r, i = i, ar = ar}
end

local function num(v)
  if type(v) == 'string' then return v end
  if v then return string.format('%.0f', v) end
  return ''
end

local function encode(rec)
  if rec.v == 2 then
    local e = b36(rec.e)
    local times = '||'
    if rec.a and rec.a ~= '' then
      times = b36(rec.a - rec.e) .. '|' .. b36(rec.o - rec.a) .. '|' .. b36(rec.x - rec.o)
    end
    local r = rec.r and string.sub(rec.r, 1, 1) or ''
    if r == '' and rec.ar and rec.st == ST_ADMITTED then r = 'v' end
    return string.upper(string.sub(rec.st, 1, 1)) .. string.rep('0', 8 - #e) .. e .. num(rec.p) .. '|' ..
      times .. '|' .. r .. '|' .. rec.t .. rec.i
  end
  return string.sub(rec.st, 1, 1) .. rec.t .. '|' .. num(rec.s) .. '|' .. num(rec.e) .. '|' .. num(rec.p) .. '|' ..
    num(rec.a) .. '|' .. num(rec.o) .. '|' .. num(rec.x) .. '|' ..
    (rec.r or (rec.ar and rec.st == ST_ADMITTED and 'arrived') or '') .. '|' .. rec.i
end

-- hex is a tail's 20 hex digits.
local function hex(t)
  return string.format('%02x%02x%02x%02x%02x%02x%02x%02x%02x%02x', string.byte(t, 1, 10))
end

-- idof is the ticket id of the record rec kept under member m.
local function idof(m, rec)
  if rec.v == 2 then return string.rep('0', 12 - #m) .. m .. hex(rec.t) end
  if rec.t == '' then return m end
  return string.rep('0', 12 - #m) .. m .. rec.t
end

-- owns: is the ticket identity's? packed is identity as records keep it;
-- records from before keep it plain.
local function owns(rec, identity, packed)
  if rec.v == 2 then return rec.i == packed end
  return rec.i == identity
end

local function unhex(s)
  return (string.gsub(s, '%x%x', function(c) return string.char(tonumber(c, 16)) end))
end

-- pack is identity as this release's records keep it (redisstore.packIdentity).
local function pack(identity)
  if #identity == 34 and string.match(identity, '^v:[0-9a-f]+$') then return 'v' .. unhex(string.sub(identity, 3)) end
  return 'i' .. identity
end

-- vfield is the visitors field of a packed identity (redisstore.visitorField).
local function vfield(packed)
  if string.sub(packed, 1, 1) == 'v' then return string.sub(packed, 2, 9) end
  return unhex(string.sub(redis.sha1hex(string.sub(packed, 2)), 1, 16))
end

-- load returns the record of member m and the key it is kept in, or nil.
local function load(base, tickets, m)
  if isseq(m) then
    local k = tkey(base, m)
    local raw = redis.call('HGET', k, m)
    if raw then return decode(raw), k, raw end
  end
  local raw = redis.call('HGET', tickets, m)
  if raw then return decode(raw), tickets, raw end
  return nil
end

-- find returns a ticket's member, record, raw record and record key by its
-- id, or nil.
local function find(base, tickets, id)
  if #id == 32 then
    local m = string.match(string.sub(id, 1, 12), '^0*(%d+)$')
    if m then
      local k = tkey(base, m)
      local raw = redis.call('HGET', k, m)
      if raw then
        local rec = decode(raw)
        if rec and idof(m, rec) == id then return m, rec, raw, k end
      else
        raw = redis.call('HGET', tickets, m)
        if raw and string.sub(raw, 2, 21) == string.sub(id, 13) then
          local rec = decode(raw)
          if rec and idof(m, rec) == id then return m, rec, raw, tickets end
        end
      end
    end
  end
  local raw = redis.call('HGET', tickets, id)
  if raw then return id, decode(raw), raw, tickets end
  return nil
end

-- vhash is a visitors field's hash for its bucket: its last three bytes,
-- mixed (the middle bits of a product), so fields that differ in a few bits
-- of a byte spread too.
local function vhash(f)
  local b1, b2, b3 = string.byte(f, -3, -1)
  return math.floor(((b1 * 256 + b2) * 256 + b3) * 40503 / 4096) % 16777216
end

-- vkey is the visitors bucket of field f among n buckets (linear hashing:
-- the hash modulo the next power of two, folded back while that bucket has
-- not been split off yet).
local function vkey(base, f, n)
  local x = vhash(f)
  local lvl = 1
  while lvl * 2 <= n do lvl = lvl * 2 end
  local b = x % (lvl * 2)
  if b >= n then b = x % lvl end
  return base .. 'v:' .. string.format('%d', b)
end

-- vgrow splits one visitors bucket while the room keeps more than 12
-- tickets per bucket (live: tickets entered and not yet purged, stats seq
-- minus stats purged: at least the visitors entries), so a bucket stays a
-- short listpack: ≤ 128 entries by far (the buckets not yet split in a
-- round hold twice the average), and a lookup scans a few dozen bytes. The
-- bucket count (stats vb) only grows; an empty bucket is no key. Returns
-- the count after.
local function vgrow(base, stats, n, live)
  if live <= 12 * n then return n end
  local lvl = 1
  while lvl * 2 <= n do lvl = lvl * 2 end
  local src = base .. 'v:' .. string.format('%d', n - lvl)
  local all = redis.call('HGETALL', src)
  local moved, gone = {}, {}
  for i = 1, #all, 2 do
    if vhash(all[i]) % (2 * lvl) == n then
      moved[#moved + 1], moved[#moved + 2] = all[i], all[i + 1]
      gone[#gone + 1] = all[i]
    end
  end
  if #gone > 0 then
    redis.call('HSET', base .. 'v:' .. string.format('%d', n), unpack(moved))
    redis.call('HDEL', src, unpack(gone))
  end
  redis.call('HSET', stats, 'vb', string.format('%d', n + 1))
  return n + 1
end

-- vdrop removes a purged ticket's visitors entry (packed identity, member m)
-- unless the identity has a newer ticket.
local function vdrop(base, stats, packed, m)
  local n = tonumber(redis.call('HGET', stats, 'vb')) or 1
  local f = vfield(packed)
  local k = vkey(base, f, n)
  if redis.call('HGET', k, f) == m then
    redis.call('HDEL', k, f)
  end
end

-- joined is scores t (a table, or a string already joined) as one string,
-- joined in pieces: one concat of 10,000 overflows miniredis's Lua.
local function joined(t)
  if type(t) == 'string' then return t end
  local parts = {}
  for i = 1, #t, 1000 do parts[#parts + 1] = table.concat(t, ',', i, math.min(i + 999, #t)) end
  return table.concat(parts, ',')
end

-- log_changes appends one entry to the room's change log for this call's
-- changes to q (scores added, removed: tables, or strings already joined), read by the servers that keep
-- positions themselves (queue.Changes). n counts the entries so a reader sees
-- a gap; waiting is q's size when the caller knows it. It keeps about as many as wait, within [500, 100000] entries
-- (queue.LogKeepMin, LogKeep): a reader further behind reads a snapshot,
-- which costs no more than replaying. An entry leaves out a side with no
-- scores (the reader takes it as empty): an enter's entry is n and a.
local function log_changes(q, stats, log, added, removed, waiting)
  if #added == 0 and #removed == 0 then return end
  local keep = string.format('%d', math.min(100000, math.max(500, waiting or redis.call('ZCARD', q))))
  local n = string.format('%d', redis.call('HINCRBY', stats, 'logn', 1))
  if #removed == 0 then
    redis.call('XADD', log, 'MAXLEN', '~', keep, '*', 'n', n, 'a', joined(added))
  elseif #added == 0 then
    redis.call('XADD', log, 'MAXLEN', '~', keep, '*', 'n', n, 'd', joined(removed))
  else
    redis.call('XADD', log, 'MAXLEN', '~', keep, '*', 'n', n, 'a', joined(added), 'd', joined(removed))
  end
end

-- The unarrived slots of a client network (queue.UnarrivedLimit): each
-- place's network (netkey: written by enter.lua and draw.lua, deleted with
-- the record by tick.lua's purge), and per network
-- <base>un:<network> ZSET member -> the end of its arrival window (ms),
-- added as it is admitted, removed as it arrives (arrive.lua), read after
-- dropping the windows that ended: a slot that left otherwise (completed,
-- left, reclaimed) counts until its window ends, never longer. The key
-- expires with its last window, so a room's deletion leaves none behind
-- for longer than that.
local function unarrived(base, network, now)
  local k = base .. 'un:' .. network
  redis.call('ZREMRANGEBYSCORE', k, '-inf', now)
  return redis.call('ZCARD', k)
end
local function unarrived_add(base, network, m, deadline, now)
  local k = base .. 'un:' .. network
  redis.call('ZADD', k, deadline, m)
  if redis.call('PTTL', k) < deadline - now then redis.call('PEXPIRE', k, deadline - now + 1000) end
end
