-- Hands seats from the order that let them go to a waiting-list offer's
-- order in one step (core/handoff.go), so they are never free in between:
-- a seat held by ARGV[1] (locked or sold) or held by nobody becomes locked
-- by ARGV[2] for user ARGV[3] at ARGV[4] ms. A seat held by any other order
-- is left alone: the DB gives it to the offer, and reconcile
-- (stale_redis_lock) settles it. ARGV[1] may be '' (an unblock: the seats
-- are free here and still blocked apart).
-- KEYS[1] seats hash, KEYS[2] limit hash, KEYS[3] the best-available
-- bounds, stale once a free seat is taken here (best.lua).
-- ARGV[5..] seat ids. Returns the number of seats moved.
local moved = 0
for i = 5, #ARGV do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  local take = true
  if v then
    local _, order, user = parse(v)
    if order == ARGV[1] then
      uncount(KEYS[2], user)
    else
      take = false
    end
  else
    redis.call('DEL', KEYS[3])
  end
  if take then
    redis.call('HINCRBY', KEYS[2], ARGV[3], 1)
    redis.call('HSET', KEYS[1], ARGV[i], '1|' .. ARGV[2] .. '|' .. ARGV[3] .. '|' .. ARGV[4])
    moved = moved + 1
  end
end
return moved
