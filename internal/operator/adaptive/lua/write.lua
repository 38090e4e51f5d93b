-- write: store one evaluation unless another server claimed a later window
-- meanwhile, so a slow read never overwrites a newer state.
-- KEYS[1] activation HASH  ARGV[1] claimed at (ms)  ARGV[2] ttl (ms)
-- ARGV[3..] field, value, ...
-- Returns 1 when written, 0 when the claim was lost.
if redis.call('HGET', KEYS[1], 'evaluated_at') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
