-- active: does an admitted ticket still hold its slot, and if not, why.
-- KEYS[1] active  KEYS[2] tickets
-- ARGV[1] ticket id  ARGV[2] now (ms)
-- Returns {1, ""} or {0, reason}.
local exp = tonumber(redis.call('ZSCORE', KEYS[1], ARGV[1]))
if exp and exp > tonumber(ARGV[2]) then return {1, ''} end
local raw = redis.call('HGET', KEYS[2], ARGV[1])
if not raw then return {0, 'unknown'} end
local rec = cjson.decode(raw)
if exp then return {0, 'reclaimed'} end
return {0, rec.r or 'reclaimed'}
