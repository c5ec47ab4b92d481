-- Frees one seat only if it is still locked by the given order and was
-- locked before a cutoff. Compare and delete happen in one script, so a
-- fresh lock taken after the caller looked is never touched.
-- KEYS[1] seats hash, KEYS[2] limit hash, KEYS[3] the best-available
-- bounds (stale once a seat is freed, best.lua).
-- ARGV[1] seat id, ARGV[2] orderNo, ARGV[3] cutoff ms.
-- Returns 1 if the seat was freed, else 0.
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then
  return 0
end
local state, order, user, ms = parse(v)
if state ~= '1' or order ~= ARGV[2] or tonumber(ms) >= tonumber(ARGV[3]) then
  return 0
end
redis.call('HDEL', KEYS[1], ARGV[1])
uncount(KEYS[2], user)
redis.call('DEL', KEYS[3])
return 1
