-- Marks seats sold to one order, overwriting whatever is there: the DB
-- already says they are sold.
-- KEYS[1] seats hash, KEYS[2] limit hash, KEYS[3] the best-available
-- bounds, stale once a free seat is sold here (best.lua).
-- ARGV[1] orderNo, ARGV[2] userID, ARGV[3..] seat ids.
-- Counters stay "seats each user holds locked or sold": a seat already
-- counted for the buyer (held by any of the buyer's orders) changes no
-- counter; otherwise the buyer gains one and a previous holder loses one.
-- The lock time is kept when the seat was locked by this order, else 0.
for i = 3, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  local prev_user, lock_ms = nil, '0'
  if v then
    local _, order, user, ms = parse(v)
    prev_user = user
    if order == ARGV[1] then
      lock_ms = ms
    end
  else
    redis.call('DEL', KEYS[3])
  end
  if prev_user ~= ARGV[2] then
    if prev_user then
      uncount(KEYS[2], prev_user)
    end
    redis.call('HINCRBY', KEYS[2], ARGV[2], 1)
  end
  redis.call('HSET', KEYS[1], ARGV[i], '2|' .. ARGV[1] .. '|' .. ARGV[2] .. '|' .. lock_ms)
end
return #ARGV - 2
