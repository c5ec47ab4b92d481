-- Frees the seats still locked by one order; sold seats and other holders
-- are left alone, so a second release frees nothing.
-- KEYS[1] seats hash, KEYS[2] limit hash.
-- ARGV[1] orderNo, ARGV[2..] seat ids.
-- Returns the number of seats freed.
local released = 0
for i = 2, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  if v then
    local state, order, user = parse(v)
    if state == '1' and order == ARGV[1] then
      redis.call('HDEL', KEYS[1], ARGV[i])
      -- The counter given back is the one Lock charged: the stored holder's.
      uncount(KEYS[2], user)
      released = released + 1
    end
  end
end
return released
