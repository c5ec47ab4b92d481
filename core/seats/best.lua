-- Chooses seats by the best-available rules (core/bestseats.go, whose
-- ChooseBest is the same choice in Go) and locks them as lock.lua does,
-- in one step.
-- KEYS[1] seats hash, KEYS[2] limit hash, KEYS[3] blocked hash,
-- KEYS[4] the show's seat index: field t its tag, n its row count,
-- 1..n one row each, "id,category,accessible,score,break;..." in col order,
-- o1..o10 the rows by the best score k seats of each can have,
-- "row,bound;..." (SeatIndex.Order).
-- ARGV[1] orderNo, ARGV[2] userID, ARGV[3] limit (0 = none), ARGV[4] nowMs,
-- ARGV[5] the index tag the caller holds, ARGV[6] count, ARGV[7] category
-- ('' any), ARGV[8] together, ARGV[9] accessible, ARGV[10] avoid singles
-- ('1' or '0' each).
-- Returns {'index'} when the stored index is missing or another, {'limit'},
-- {'none', category, free, together, ...} or {'ok', stranded, seat...}.
--
-- Cost: rows are read (index row, HMGET of their seats) only when visited,
-- in the order of their bound, and the visit stops once no row left can
-- beat the orphan-free set in hand. Only a request that fits nowhere, or
-- whose every fitting set strands a seat, reads the whole show.
local k = tonumber(ARGV[6])
local idx = redis.call('HMGET', KEYS[4], 't', 'n', 'o' .. (ARGV[8] == '1' and k or 1))
if idx[1] ~= ARGV[5] then
  return {'index'}
end
local limit = tonumber(ARGV[3])
if limit > 0 then
  local count = tonumber(redis.call('HGET', KEYS[2], ARGV[2]) or '0')
  if count + k > limit then
    return {'limit'}
  end
end
local cat, together, acc, avoid = ARGV[7], ARGV[8] == '1', ARGV[9], ARGV[10] == '1'
local nrows = tonumber(idx[2])
-- Most shows block nothing: then no seat needs looking up there.
local anyBlocked = redis.call('HLEN', KEYS[3]) > 0

-- HMGET in chunks: unpack must stay within Lua's stack.
local function mget(key, ids, n, into)
  for j = 1, n, 1000 do
    local got = redis.call('HMGET', key, unpack(ids, j, math.min(j + 999, n)))
    for i = 1, #got do
      into[j + i - 1] = got[i]
    end
  end
end

-- rows[r] once row r is read.
local rows = {}
local function load(r)
  if rows[r] then
    return rows[r]
  end
  local row = {ids = {}, cat = {}, acc = {}, score = {}, brk = {}, free = {}, n = 0}
  local n = 0
  for id, c, a, sc, b in string.gmatch(redis.call('HGET', KEYS[4], tostring(r)), '([^,;]+),([^,;]*),(%d),(%d+),(%d)') do
    n = n + 1
    row.ids[n], row.cat[n], row.acc[n], row.score[n], row.brk[n] = id, c, a, tonumber(sc), b == '1'
  end
  row.n = n
  local held, blocked = {}, {}
  mget(KEYS[1], row.ids, n, held)
  if anyBlocked then
    mget(KEYS[3], row.ids, n, blocked)
  end
  for i = 1, n do
    row.free[i] = not held[i] and not blocked[i]
  end
  rows[r] = row
  return row
end

-- The rows to visit, in order: peek gives the next row and its bound
-- (false when none is left), advance moves past it.
-- (string.find, not a gmatch iterator: the embedded Redis runs gopher-lua,
-- whose gmatch iterators work only in a generic for.)
local order, at = idx[3] or '', 1
local peekR, peekB
local function peek()
  if peekR == nil then
    local _, e, r, b = string.find(order, '(%d+),(%d+)', at)
    peekR, peekB = false, 0
    if e then
      at, peekR, peekB = e + 1, tonumber(r), tonumber(b)
    end
  end
  return peekR, peekB
end
local function advance()
  peekR = nil
end

local function eligible(row, i)
  return row.free[i] and (cat == '' or row.cat[i] == cat) and row.acc[i] == acc
end

-- Whether taking row seats i..j strands a single free seat beside them.
local function strands(row, i, j)
  local st, brk, n = row.free, row.brk, row.n
  if i > 1 and not brk[i - 1] and st[i - 1] and (i - 2 < 1 or brk[i - 2] or not st[i - 2]) then
    return true
  end
  if not brk[j] and j + 1 <= n and st[j + 1] and (brk[j + 1] or j + 2 > n or not st[j + 2]) then
    return true
  end
  return false
end

-- The best set in hand, compared by (strands, score, row, position).
local bestR, bestI, bestS, bestScore
local function better(s, score, r, i)
  if not bestR then
    return true
  end
  if s ~= bestS then
    return not s
  end
  if score ~= bestScore then
    return score < bestScore
  end
  if r ~= bestR then
    return r < bestR
  end
  return i < bestI
end
-- The next row worth a visit, or nil: none is left, or none left can beat
-- the orphan-free set in hand.
local function nextRow()
  local r, bound = peek()
  if not r or (bestR and not bestS and (bound > bestScore or (bound == bestScore and r > bestR))) then
    return nil
  end
  advance()
  return r
end

local chosen, stranded = {}, false
if together then
  while true do
    local r = nextRow()
    if not r then
      break
    end
    local row = load(r)
    local run, sum = 0, 0
    for i = 1, row.n do
      if not eligible(row, i) then
        run, sum = 0, 0
      else
        if i > 1 and row.brk[i - 1] then
          run, sum = 0, 0
        end
        run = run + 1
        sum = sum + row.score[i]
        if run > k then
          sum = sum - row.score[i - k]
        end
        if run >= k then
          local s = avoid and strands(row, i - k + 1, i)
          if better(s, sum, r, i - k + 1) then
            bestR, bestI, bestS, bestScore = r, i - k + 1, s, sum
          end
        end
      end
    end
  end
  if bestR then
    local row = rows[bestR]
    stranded = strands(row, bestI, bestI + k - 1)
    for i = bestI, bestI + k - 1 do
      chosen[#chosen + 1] = row.ids[i]
    end
  end
else
  -- One seat at a time, each from the rows read so far and any row that
  -- could still give a better seat.
  local visited, picks = {}, {}
  local function scan(r)
    local row = rows[r]
    for i = 1, row.n do
      if eligible(row, i) and not (bestR and not bestS and row.score[i] > bestScore) then
        local s = avoid and strands(row, i, i)
        if better(s, row.score[i], r, i) then
          bestR, bestI, bestS, bestScore = r, i, s, row.score[i]
        end
      end
    end
  end
  for _ = 1, k do
    bestR = nil
    for _, r in ipairs(visited) do
      scan(r)
    end
    while true do
      local r = nextRow()
      if not r then
        break
      end
      load(r)
      visited[#visited + 1] = r
      scan(r)
    end
    if not bestR then
      break
    end
    local row = rows[bestR]
    stranded = stranded or strands(row, bestI, bestI)
    row.free[bestI] = false
    picks[#picks + 1] = bestR
    picks[#picks + 1] = bestI
    chosen[#chosen + 1] = row.ids[bestI]
  end
  if #chosen < k then
    -- Not enough: the seats picked go back before counting what is left.
    for j = 1, #picks, 2 do
      rows[picks[j]].free[picks[j + 1]] = true
    end
    chosen = {}
  end
end

if #chosen == 0 then
  -- What is left per category: free seats of the asked accessibility,
  -- and their longest stretch together.
  local free, best, cats = {}, {}, {}
  for r = 1, nrows do
    local row = load(r)
    local run = 0
    for i = 1, row.n do
      local c = row.cat[i]
      if not free[c] then
        free[c], best[c] = 0, 0
        cats[#cats + 1] = c
      end
      if i > 1 and row.brk[i - 1] then
        run = 0
      end
      if not row.free[i] or row.acc[i] ~= acc then
        run = 0
      else
        if run > 0 and row.cat[i - 1] ~= c then
          run = 0
        end
        run = run + 1
        free[c] = free[c] + 1
        if run > best[c] then
          best[c] = run
        end
      end
    end
  end
  local out = {'none'}
  for _, c in ipairs(cats) do
    out[#out + 1] = c
    out[#out + 1] = tostring(free[c])
    out[#out + 1] = tostring(best[c])
  end
  return out
end

local value = '1|' .. ARGV[1] .. '|' .. ARGV[2] .. '|' .. ARGV[4]
local fields = {}
for i = 1, #chosen do
  fields[2 * i - 1] = chosen[i]
  fields[2 * i] = value
end
redis.call('HSET', KEYS[1], unpack(fields))
redis.call('HINCRBY', KEYS[2], ARGV[2], #chosen)
local out = {'ok', stranded and '1' or '0'}
for i = 1, #chosen do
  out[#out + 1] = chosen[i]
end
return out
