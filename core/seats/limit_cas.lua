-- Sets one user's purchase counter only if it still holds what the caller
-- read: a Lock, Release or sell that moved it since is never overwritten.
-- KEYS[1] limit hash.
-- ARGV[1] userID, ARGV[2] expected count (a missing field counts 0),
-- ARGV[3] new count (0 removes the field).
-- Returns 1 if it wrote, 0 if the counter had moved.
local have = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
if have ~= tonumber(ARGV[2]) then
  return 0
end
if tonumber(ARGV[3]) == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
end
return 1
