-- Unblocks the seats still blocked since before a cutoff. Compare and delete
-- happen in one script, so a block taken after the caller looked (a
-- BlockSeats whose DB transaction has not committed yet) is never touched.
-- KEYS[1] blocked hash, KEYS[2] the best-available bounds (stale once a
-- seat is freed, best.lua).
-- ARGV[1] cutoff ms, ARGV[2..] seat ids.
-- A value without a time ('reason', written before blocks carried one)
-- counts as old. Returns the seats unblocked.
local freed = {}
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v then
    local ms = tonumber(string.match(v, '|(%d+)$') or '0')
    if ms < tonumber(ARGV[1]) then
      redis.call('HDEL', KEYS[1], ARGV[i])
      freed[#freed + 1] = ARGV[i]
    end
  end
end
if #freed > 0 then
  redis.call('DEL', KEYS[2])
end
return freed
