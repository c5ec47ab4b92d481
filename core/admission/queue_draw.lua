-- The second step of a shuffle: stores the drawn positions and publishes
-- the seed, unless the order is drawn already. The draw is a function of
-- the seed and the closed pre-queue, so concurrent callers bring the same
-- positions and whichever comes first stores them.
-- KEYS[1] cfg hash, KEYS[2] pos hash (user → position).
-- ARGV[1] the seed the positions were drawn with, ARGV[2..] user, position
-- pairs. Returns 1 when stored, 0 when drawn already or the seed differs
-- (the queue was deleted and made anew meanwhile).
local c = redis.call('HMGET', KEYS[1], 'seed', 'shuffled')
if c[1] ~= ARGV[1] or c[2] == '1' then
  return 0
end
-- In slices, as unpack is bounded by Lua's stack; pairs start at ARGV[2],
-- so each slice of an even length holds whole pairs.
for i = 2, #ARGV, 1000 do
  redis.call('HSET', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
redis.call('HSET', KEYS[1], 'shuffled', '1')
return 1
