-- Frees every seat one order holds locked, wherever it is: for an order
-- whose seats the caller does not know (the reply of best.lua was lost).
-- It reads the whole seats hash, which is fine on that rare path only.
-- KEYS[1] seats hash, KEYS[2] limit hash, KEYS[3] the best-available
-- bounds (stale once a seat is freed, best.lua). ARGV[1] orderNo.
-- Returns the number of seats freed.
local all = redis.call('HGETALL', KEYS[1])
local released = 0
for i = 1, #all, 2 do
  local state, order, user = parse(all[i + 1])
  if state == '1' and order == ARGV[1] then
    redis.call('HDEL', KEYS[1], all[i])
    uncount(KEYS[2], user)
    released = released + 1
  end
end
if released > 0 then
  redis.call('DEL', KEYS[3])
end
return released
