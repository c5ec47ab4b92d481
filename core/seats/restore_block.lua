-- Writes blocks back (reconcile's repair of blocks the seat store lost or
-- holds for another reason), each only if the seat's block is still what
-- the caller read: a block or unblock that ran meanwhile wins.
-- KEYS[1] blocked hash, KEYS[2] the best-available bounds, stale once a
-- seat is blocked (best.lua).
-- ARGV in fours: seat id, the reason read ('' when the seat was not
-- blocked), the block ms read, the value to write.
-- Returns the seats written.
local written = {}
for i = 1, #ARGV, 4 do
  local v = redis.call('HGET', KEYS[1], ARGV[i])
  local same
  if not v then
    same = ARGV[i + 1] == ''
  else
    local reason, ms = string.match(v, '^(.*)|(%d+)$')
    if not reason then
      reason, ms = v, '0'
    end
    same = reason == ARGV[i + 1] and tonumber(ms) == tonumber(ARGV[i + 2])
  end
  if same then
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 3])
    written[#written + 1] = ARGV[i]
  end
end
if #written > 0 then
  redis.call('DEL', KEYS[2])
end
return written
