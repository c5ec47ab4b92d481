-- One user's admission record. KEYS[1] cfg hash, KEYS[2] admitted hash
-- (user → first admitted ms), KEYS[3] placed set, KEYS[4] pos hash.
-- ARGV[1] op, ARGV[2] user, ARGV[3] now_ms (op 'admitted').
-- Ops: 'admitted' stamps ARGV[3] the first time and returns the stamp;
-- 'mark' adds the user to placed and returns 1 the first time (counting
-- it in cfg), else 0; 'placed' returns 1 when placed, else 0; 'pos'
-- returns the drawn position, 0 when not drawn. {'none'} when there is
-- no queue.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'none'}
end
local op, user = ARGV[1], ARGV[2]
if op == 'admitted' then
  redis.call('HSETNX', KEYS[2], user, ARGV[3])
  return {'ok', redis.call('HGET', KEYS[2], user)}
elseif op == 'mark' then
  local first = redis.call('SADD', KEYS[3], user)
  if first == 1 then
    redis.call('HINCRBY', KEYS[1], 'placed', 1)
  end
  return {'ok', tostring(first)}
elseif op == 'placed' then
  return {'ok', tostring(redis.call('SISMEMBER', KEYS[3], user))}
elseif op == 'pos' then
  return {'ok', redis.call('HGET', KEYS[4], user) or '0'}
end
return redis.error_reply('unknown op ' .. op)
