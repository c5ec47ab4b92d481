-- Adds a user to a show's queue, or returns the entry it has.
-- KEYS[1] cfg hash, KEYS[2] users hash (user → "seq|pre|joined_ms|ticket").
-- ARGV[1] user, ARGV[2] ticket, ARGV[3] now_ms.
-- Returns {'none'} when the queue is not enabled, {'old', value} or
-- {'new', value}. A join is pre-queue while now is before opens_ms and the
-- pre-queue is open; any other join closes it, so the pre-queue entries
-- are exactly seq 1..pre.
local c = redis.call('HMGET', KEYS[1], 'enabled', 'opens_ms', 'closed')
if c[1] ~= '1' then
  return {'none'}
end
local old = redis.call('HGET', KEYS[2], ARGV[1])
if old then
  return {'old', old}
end
local pre = '0'
if c[3] ~= '1' then
  if tonumber(ARGV[3]) < tonumber(c[2] or '0') then
    pre = '1'
    redis.call('HINCRBY', KEYS[1], 'pre', 1)
  else
    redis.call('HSET', KEYS[1], 'closed', '1')
  end
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local value = seq .. '|' .. pre .. '|' .. ARGV[3] .. '|' .. ARGV[2]
redis.call('HSET', KEYS[2], ARGV[1], value)
return {'new', value}
