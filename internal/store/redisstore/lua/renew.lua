-- renew: start a new data epoch when the data is older than a server saw
-- (restored from an older snapshot), unless another server already did.
-- KEYS[1] epoch  STRING the data epoch's id
-- ARGV[1] stale: the id the caller found stale  ARGV[2] next: the new id
-- Returns the epoch's id after the call: the new id, or the one another server set.
local id = redis.call('GET', KEYS[1])
if id == false or id == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2])
  return ARGV[2]
end
return id
