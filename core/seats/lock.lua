-- Locks every seat for one order, or none.
-- KEYS[1] seats hash, KEYS[2] limit hash.
-- ARGV[1] orderNo, ARGV[2] userID, ARGV[3] limit (0 = none), ARGV[4] nowMs, ARGV[5..] seat ids.
-- Returns {'ok'}, {'limit'} or {'taken', seat...}.
local taken = {'taken'}
for i = 5, #ARGV do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    taken[#taken + 1] = ARGV[i]
  end
end
if #taken > 1 then
  return taken
end

local n = #ARGV - 4
local limit = tonumber(ARGV[3])
if limit > 0 then
  local held = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
  if held + n > limit then
    return {'limit'}
  end
end

local value = '1|' .. ARGV[1] .. '|' .. ARGV[2] .. '|' .. ARGV[4]
for i = 5, #ARGV do
  redis.call('HSET', KEYS[1], ARGV[i], value)
end
redis.call('HINCRBY', KEYS[2], ARGV[2], n)
return {'ok'}
