-- record: the ticket record's codec, prepended to every script that reads or
-- writes records (scripts.go). A record is one string:
--   <state><tail>|<seq>|<entered>|<entry position>|<admitted>|<orderable>|<expires>|<reason>|<identity>
-- state is the state's first letter (w waiting, a admitted, s scheduled,
-- e expired), the numbers are decimal (ms for times), empty when unset, and
-- the identity comes last, as it may hold any byte. A ticket's member in the
-- room's hash and sets is its seq in decimal (a few bytes, not the 32 of its
-- id); its id is that seq zero-padded to 12 digits, then the 20-hex tail
-- kept in the record: still 32 lower-case hex, the id finds the record and
-- the tail proves the id.
-- Tickets from before this encoding (JSON records, members = ids) still
-- read and change: their tail is '' and their member is their id.
-- No tables or number formatting up here: this part runs on every call.

local function decode(raw)
  if not raw then return nil end
  if string.byte(raw, 1) == 123 then -- '{': a JSON record from before
    local rec = cjson.decode(raw)
    rec.t = ''
    return rec
  end
  local c, t, s, e, p, a, o, x, r, i = string.match(raw,
    '^(%a)(%x*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|([^|]*)|(.*)$')
  if not c then return nil end
  if r == '' then r = nil end
  local st = (c == 'w' and 'waiting') or (c == 'a' and 'admitted') or (c == 's' and 'scheduled') or 'expired'
  -- Numbers stay strings ('' when unset): encode writes them back as they
  -- are; compare them through tonumber.
  return {st = st, t = t, s = s, e = e, p = p, a = a, o = o, x = x, r = r, i = i}
end

local function num(v)
  if type(v) == 'string' then return v end
  if v then return string.format('%.0f', v) end
  return ''
end

local function encode(rec)
  return string.sub(rec.st, 1, 1) .. rec.t .. '|' .. num(rec.s) .. '|' .. num(rec.e) .. '|' .. num(rec.p) .. '|' ..
    num(rec.a) .. '|' .. num(rec.o) .. '|' .. num(rec.x) .. '|' .. (rec.r or '') .. '|' .. rec.i
end

-- idof is the ticket id of the record rec kept under member m.
local function idof(m, rec)
  if rec.t == '' then return m end
  return string.rep('0', 12 - #m) .. m .. rec.t
end

-- find returns a ticket's member, record and raw record by its id, or nil.
local function find(tickets, id)
  if #id == 32 then
    local m = string.match(string.sub(id, 1, 12), '^0*(%d+)$')
    if m then
      local raw = redis.call('HGET', tickets, m)
      if raw and string.sub(raw, 2, 21) == string.sub(id, 13) then
        local rec = decode(raw)
        if rec and idof(m, rec) == id then return m, rec, raw end
      end
    end
  end
  local raw = redis.call('HGET', tickets, id)
  if raw then return id, decode(raw), raw end
  return nil
end

-- log_changes appends one entry to the room's change log for this call's
-- changes to q (scores added, removed), read by the servers that keep
-- positions themselves (queue.Changes). n counts the entries so a reader sees
-- a gap. It keeps about as many as wait, within [500, 100000] entries
-- (queue.LogKeepMin, LogKeep): a reader further behind reads a snapshot,
-- which costs no more than replaying. Scores are joined in pieces: one concat
-- of 10,000 overflows miniredis's Lua.
local function log_changes(q, stats, log, added, removed)
  if #added == 0 and #removed == 0 then return end
  local function join(t)
    local parts = {}
    for i = 1, #t, 1000 do parts[#parts + 1] = table.concat(t, ',', i, math.min(i + 999, #t)) end
    return table.concat(parts, ',')
  end
  local keep = math.min(100000, math.max(500, redis.call('ZCARD', q)))
  local n = redis.call('HINCRBY', stats, 'logn', 1)
  redis.call('XADD', log, 'MAXLEN', '~', keep, '*', 'n', n, 'a', join(added), 'd', join(removed))
end
