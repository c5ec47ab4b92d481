-- Blocks every seat, or none: a seat locked or sold refuses the whole call,
-- in the same atomic step in which lock.lua refuses blocked seats, so a
-- block and a placement of one seat never both take it.
-- KEYS[1] seats hash, KEYS[2] blocked hash, KEYS[3] the best-available
-- bounds, stale once a seat is blocked (best.lua).
-- ARGV[1] reason, ARGV[2] nowMs, ARGV[3..] seat ids.
-- Each blocked seat's value is 'reason|blockMs': reconcile leaves a block
-- younger than its grace period alone (its DB transaction may not have
-- committed yet).
-- Returns {'taken', seat...} or {'ok', seat...} naming the seats that were
-- not blocked before (what a failed DB step must give back).
local n = #ARGV - 2
local held = redis.call('HMGET', KEYS[1], unpack(ARGV, 3))
local taken = {'taken'}
for i = 1, n do
  if held[i] then
    taken[#taken + 1] = ARGV[i + 2]
  end
end
if #taken > 1 then
  return taken
end
local was = redis.call('HMGET', KEYS[2], unpack(ARGV, 3))
local added = {'ok'}
local fields = {}
local value = ARGV[1] .. '|' .. ARGV[2]
for i = 1, n do
  if not was[i] then
    added[#added + 1] = ARGV[i + 2]
  end
  fields[2 * i - 1] = ARGV[i + 2]
  fields[2 * i] = value
end
redis.call('HSET', KEYS[2], unpack(fields))
redis.call('DEL', KEYS[3])
return added
