-- One user's admission record. KEYS[1] cfg hash, KEYS[2] admitted hash
-- (user → first admitted ms), KEYS[3] placed set, KEYS[4] pos hash,
-- KEYS[5] claims hash (user → holder|until_ms: a placement in flight).
-- ARGV[1] op, ARGV[2] user, ARGV[3] now_ms, ARGV[4] holder, ARGV[5]
-- until_ms.
-- Ops: 'admitted' stamps ARGV[3] the first time and returns the stamp;
-- 'claim' returns 'used' when placed, 'busy' while another holder's
-- claim runs past now, else claims for ARGV[4] until ARGV[5] and returns
-- 'taken'; 'mark' drops the claim, adds the user to placed and returns 1
-- the first time (counting it in cfg), else 0; 'release' drops the claim
-- if ARGV[4] holds it and returns 0; 'pos' returns the drawn position, 0
-- when not drawn. {'none'} when there is no queue.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {'none'}
end
local op, user = ARGV[1], ARGV[2]
if op == 'admitted' then
  redis.call('HSETNX', KEYS[2], user, ARGV[3])
  return {'ok', redis.call('HGET', KEYS[2], user)}
elseif op == 'claim' then
  if redis.call('SISMEMBER', KEYS[3], user) == 1 then
    return {'ok', 'used'}
  end
  local c = redis.call('HGET', KEYS[5], user)
  if c then
    local sep = string.find(c, '|', 1, true)
    if string.sub(c, 1, sep - 1) ~= ARGV[4] and tonumber(string.sub(c, sep + 1)) > tonumber(ARGV[3]) then
      return {'ok', 'busy'}
    end
  end
  redis.call('HSET', KEYS[5], user, ARGV[4] .. '|' .. ARGV[5])
  return {'ok', 'taken'}
elseif op == 'mark' then
  redis.call('HDEL', KEYS[5], user)
  local first = redis.call('SADD', KEYS[3], user)
  if first == 1 then
    redis.call('HINCRBY', KEYS[1], 'placed', 1)
  end
  return {'ok', tostring(first)}
elseif op == 'release' then
  local c = redis.call('HGET', KEYS[5], user)
  if c and string.sub(c, 1, string.len(ARGV[4]) + 1) == ARGV[4] .. '|' then
    redis.call('HDEL', KEYS[5], user)
  end
  return {'ok', '0'}
elseif op == 'pos' then
  return {'ok', redis.call('HGET', KEYS[4], user) or '0'}
end
return redis.error_reply('unknown op ' .. op)
