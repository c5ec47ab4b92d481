-- Writes a show's queue settings; draws nothing: the seed comes from Go.
-- KEYS[1] cfg hash. ARGV[1] enabled ('1'/'0'), ARGV[2] mode, ARGV[3]
-- opens_ms (0 none), ARGV[4] window_ms, ARGV[5] paused, ARGV[6] seed hex
-- ('' when no pre-queue is wanted), ARGV[7] its hash.
-- The seed is kept only if the queue has none: it never changes once
-- drawn. Returns the cfg hash (HGETALL).
redis.call('HSET', KEYS[1], 'enabled', ARGV[1], 'mode', ARGV[2], 'opens_ms', ARGV[3],
  'window_ms', ARGV[4], 'paused', ARGV[5])
if ARGV[6] ~= '' and redis.call('HSETNX', KEYS[1], 'seed', ARGV[6]) == 1 then
  redis.call('HSET', KEYS[1], 'seed_hash', ARGV[7])
end
return redis.call('HGETALL', KEYS[1])
