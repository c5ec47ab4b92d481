-- Frees the seats one order still holds in one state: locked (its hold
-- ended) or sold (it was refunded). Seats in the other state and other
-- holders are left alone, so a second release frees nothing and a seat
-- taken again since is never touched.
-- KEYS[1] seats hash, KEYS[2] limit hash, KEYS[3] the best-available
-- bounds, stale once a seat is freed (best.lua).
-- ARGV[1] orderNo, ARGV[2] state ('1' locked, '2' sold), ARGV[3..] seat ids.
-- Returns the number of seats freed.
local released = 0
for i = 3, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v then
    local state, order, user = parse(v)
    if state == ARGV[2] and order == ARGV[1] then
      redis.call('HDEL', KEYS[1], ARGV[i])
      -- The counter given back is the stored holder's: the one lock.lua or
      -- sell.lua charged.
      uncount(KEYS[2], user)
      released = released + 1
    end
  end
end
if released > 0 then
  redis.call('DEL', KEYS[3])
end
return released
