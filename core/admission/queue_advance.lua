-- Moves the head of a show's queue by up to ARGV[1], never past the
-- entries joined, and not at all while the queue is disabled or paused or
-- its pre-queue is not drawn. KEYS[1] cfg hash.
-- Returns the head, -1 when there is no queue.
local c = redis.call('HMGET', KEYS[1], 'enabled', 'paused', 'pre', 'shuffled', 'seq', 'head')
if not c[1] then
  return -1
end
local head = tonumber(c[6] or '0')
local n = tonumber(ARGV[1])
if n <= 0 or c[1] ~= '1' or c[2] == '1' or (tonumber(c[3] or '0') > 0 and c[4] ~= '1') then
  return head
end
head = math.min(head + n, tonumber(c[5] or '0'))
redis.call('HSET', KEYS[1], 'head', string.format('%d', head))
return head
