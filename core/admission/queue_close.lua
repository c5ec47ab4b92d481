-- The first step of a shuffle: closes the pre-queue once it is time, so
-- the pre-queue entries read next are all there will be.
-- KEYS[1] cfg hash. ARGV[1] now_ms.
-- Returns {'none'} for no queue, {'no'} when there is nothing to draw
-- (no seed, already drawn, not yet time), else {'go', seed, pre}.
local c = redis.call('HMGET', KEYS[1], 'enabled', 'seed', 'shuffled', 'opens_ms', 'pre')
if not c[1] then
  return {'none'}
end
if not c[2] or c[3] == '1' or tonumber(ARGV[1]) < tonumber(c[4] or '0') then
  return {'no'}
end
redis.call('HSET', KEYS[1], 'closed', '1')
return {'go', c[2], c[5] or '0'}
