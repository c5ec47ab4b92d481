-- Locks every seat for one order, or none.
-- KEYS[1] seats hash, KEYS[2] limit hash, KEYS[3] blocked hash, KEYS[4]
-- the best-available bounds, stale once a seat is taken here (best.lua).
-- ARGV[1] orderNo, ARGV[2] userID, ARGV[3] limit (0 = none), ARGV[4] nowMs,
-- ARGV[5] '1' when blocked seats may be taken (box office), else '0',
-- ARGV[6..] seat ids.
-- Returns {'ok'}, {'limit'} or {'taken', seat...}; a blocked seat is taken
-- unless ARGV[5] is '1'.
-- Reads and writes are one variadic call each, as redis.call is the
-- script's main cost; Go caps the seat count (MaxLockSeats) for unpack.
local n = #ARGV - 5
local held = redis.call('HMGET', KEYS[1], unpack(ARGV, 6))
local blocked = {}
if ARGV[5] ~= '1' then
  blocked = redis.call('HMGET', KEYS[3], unpack(ARGV, 6))
end
local taken = {'taken'}
for i = 1, n do
  if held[i] or blocked[i] then
    taken[#taken + 1] = ARGV[i + 5]
  end
end
if #taken > 1 then
  return taken
end

local limit = tonumber(ARGV[3])
if limit > 0 then
  local count = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
  if count + n > limit then
    return {'limit'}
  end
end

local value = '1|' .. ARGV[1] .. '|' .. ARGV[2] .. '|' .. ARGV[4]
local fields = {}
for i = 1, n do
  fields[2 * i - 1] = ARGV[i + 5]
  fields[2 * i] = value
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('HINCRBY', KEYS[2], ARGV[2], n)
redis.call('DEL', KEYS[4])
return {'ok'}
