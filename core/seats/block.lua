-- Blocks every seat, or none: a seat locked or sold refuses the whole call,
-- in the same atomic step in which lock.lua refuses blocked seats, so a
-- block and a placement of one seat never both take it.
-- KEYS[1] seats hash, KEYS[2] blocked hash.
-- ARGV[1] reason, ARGV[2..] seat ids.
-- Returns {'taken', seat...} or {'ok', seat...} naming the seats that were
-- not blocked before (what a failed DB step must give back).
local n = #ARGV - 1
local held = redis.call('HMGET', KEYS[1], unpack(ARGV, 2))
local taken = {'taken'}
for i = 1, n do
  if held[i] then
    taken[#taken + 1] = ARGV[i + 1]
  end
end
if #taken > 1 then
  return taken
end
local was = redis.call('HMGET', KEYS[2], unpack(ARGV, 2))
local added = {'ok'}
local fields = {}
for i = 1, n do
  if not was[i] then
    added[#added + 1] = ARGV[i + 1]
  end
  fields[2 * i - 1] = ARGV[i + 1]
  fields[2 * i] = ARGV[1]
end
redis.call('HSET', KEYS[2], unpack(fields))
return added
