-- handoff: redeem a hand-off code once, and bind its ticket's token to the redeemer.
-- KEYS[1] code    STRING the code's mark: set once, expires with the code
-- KEYS[2] holder  STRING who holds this ticket's token (hold.lua)
-- ARGV[1] code_ttl: the code's time left (ms)  ARGV[2] holder ("" binds nobody)
-- ARGV[3] hold_ttl: the token's time left (ms)
-- Returns 1 when this is the code's first redemption, 0 when it was spent.
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then return 0 end
if ARGV[2] ~= '' then
  -- The redeemer came from the waiting page, which only the owner sees:
  -- whoever held the token before (a copy presented first) holds it no more.
  redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
end
return 1
