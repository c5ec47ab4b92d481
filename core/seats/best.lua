-- Chooses seats by the best-available rules (core/bestseats.go, whose
-- ChooseBest is the same choice in Go) and locks them as lock.lua does,
-- in one step, for a batch of requests one after the other (bestbatch.go
-- gathers the concurrent ones of a show): the rows read, the walk of the
-- row order and the learning of bounds are shared by the batch.
-- KEYS[1] seats hash, KEYS[2] limit hash, KEYS[3] blocked hash,
-- KEYS[4] the show's seat index: field t its tag, n its row count,
-- 1..n one row each, JSON {"i": ids, "c": categories, "a": accessible,
-- "s": scores, "b": break after} in col order (cjson decodes it in C),
-- o1..o10 the rows by the best score k seats of each can have,
-- "row,bound;..." (SeatIndex.Order), c the categories, each followed by
-- ';'. KEYS[5] the bounds learnt here (core.RowBounds): field row, for
-- k = 1..10 two numbers of 12 characters, the lowest score of k adjacent
-- free seats of the row when last read and the lowest of those that
-- strand no seat ('x...' none); a row missing was not read. Field 'p'..k
-- ("j,at"): the first j-1 rows of order o..k have no k free seats
-- together, and at is where entry j starts in that order's string.
-- ARGV[1] the index tag the callers hold, then per request from ARGV[2]
-- on, 9 each: orderNo, userID, limit (0 = none), nowMs, count, category
-- ('' any), together, accessible, avoid singles ('1' or '0' each).
-- Returns {'index'} when the stored index is missing or another, else one
-- reply per request: {'limit'}, {'none', category, free, together, ...}
-- or {'ok', stranded, seat...}.
--
-- Cost: rows are read (index row, HMGET of their seats) only when visited,
-- in the order of their bound, and the visit stops once no row left can
-- beat the orphan-free set in hand. A row whose learnt bounds cannot beat
-- it either is passed unread, and one whose sets all strand a seat is read
-- only when no orphan-free set exists. The bounds hold while this script
-- is the only change to the show's seats: every other one that frees or
-- takes a seat deletes KEYS[5] (release*.lua, lock.lua, block.lua,
-- sell.lua of a free seat, unblock and restore, the Go writes). So a sale
-- of best-available orders reads about one row a choice; the first choice
-- after another change reads the rows by bound as far as it must. Rows
-- full for k only stay full while the bounds hold, so the walk of order
-- o..k starts past the ones passed before (field 'p'..k): late in a sale
-- it no longer steps over every full front row.
local idx = redis.call('HMGET', KEYS[4], 't', 'n', 'c')
if idx[1] ~= ARGV[1] then
  return {'index'}
end
-- The request being answered (choose sets them).
local k, cat, together, acc, avoid
local nrows = tonumber(idx[2])
local W, MAXK, CAP = 12, 10, 999999999999
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

-- rows[r] once row r is read; read lists them.
local rows, read = {}, {}
local function load(r)
  if rows[r] then
    return rows[r]
  end
  local j = cjson.decode(redis.call('HGET', KEYS[4], tostring(r)))
  local row = {ids = j.i, cat = j.c, acc = j.a, score = j.s, brk = j.b, free = {}, n = #j.i}
  local n = row.n
  local held, blocked = {}, {}
  mget(KEYS[1], row.ids, n, held)
  if anyBlocked then
    mget(KEYS[3], row.ids, n, blocked)
  end
  for i = 1, n do
    row.free[i] = not held[i] and not blocked[i]
  end
  rows[r] = row
  read[#read + 1] = r
  return row
end

-- The stored bounds of kk seats (any set, orphan-free sets) in b, a
-- row's stored string (false when not stored): -1 unknown, -2 none.
local function known(b, kk)
  if not b then
    return -1, -1
  end
  local at = (kk - 1) * 2 * W + 1
  if string.byte(b, at) == 120 then
    return -2, -2 -- no set at all, so no orphan-free one
  end
  local d = tonumber(string.sub(b, at, at + W - 1))
  if string.byte(b, at + W) == 120 then
    return d, -2
  end
  return d, tonumber(string.sub(b, at + W, at + 2 * W - 1))
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
-- Whether no set of row r scoring at least score can beat the orphan-free
-- set in hand.
local function beaten(score, r)
  return bestR and not bestS and (score > bestScore or (score == bestScore and r > bestR))
end

local function num(v)
  return v and string.format('%012d', math.min(v, CAP)) or 'xxxxxxxxxxxx'
end

-- The walk of the row order o..kk (by bound), one per count, shared by
-- the batch: parsed as far as visited from the first row not known full
-- (field 'p'..kk); entry(w, j) is the j-th row and its bound, nil past
-- the end; stored(w, j) the stored bounds of that row, fetched 32 rows at
-- a time. A row the batch took seats from was read, and is judged as it
-- is now, so the stored bounds of the others stay true. (string.find, not
-- a gmatch iterator: the embedded Redis runs gopher-lua, whose gmatch
-- iterators work only in a generic for.)
local walks = {}
local function walkOf(kk)
  local w = walks[kk]
  if w then
    return w
  end
  w = {order = redis.call('HGET', KEYS[4], 'o' .. kk) or '', oat = 1, parsed = 0, r = {}, b = {}, at = {},
    bnd = {}, fetched = 0, first = 1, field = 'p' .. kk}
  local p = redis.call('HGET', KEYS[5], w.field)
  if p then
    local _, _, js, ats = string.find(p, '(%d+),(%d+)')
    w.first, w.oat = tonumber(js), tonumber(ats)
    w.parsed, w.fetched = w.first - 1, w.first - 1
  end
  w.passedTo = w.first -- the walk found entries first..passedTo-1 full
  walks[kk] = w
  return w
end
local function entry(w, j)
  while w.parsed < j do
    local at = w.oat
    local _, e, rs, bs = string.find(w.order, '(%d+),(%d+)', at)
    if not e then
      return nil
    end
    w.oat = e + 1
    local n = w.parsed + 1
    w.parsed, w.r[n], w.b[n], w.at[n] = n, tonumber(rs), tonumber(bs), at
  end
  return w.r[j], w.b[j]
end
local function stored(w, j)
  if j > w.fetched then
    local rs = {}
    for i = j, j + 31 do
      local r = entry(w, i)
      if not r then
        break
      end
      rs[#rs + 1] = r
    end
    local got = redis.call('HMGET', KEYS[5], unpack(rs))
    for i = 1, #got do
      w.bnd[j + i - 1] = got[i]
    end
    w.fetched = j + #got - 1
  end
  return w.bnd[j]
end

-- bounds is a read row's bounds as it stands: for k = 1..MAXK the lowest
-- score of k adjacent free seats (any) and of those that strand no seat
-- (free), nil for none; kept until a seat of the row changes (row.bnd).
local function bounds(row)
  if row.bnd then
    return row.bnd.any, row.bnd.free
  end
  local any, free = {}, {}
  local st, brk, score, n = row.free, row.brk, row.score, row.n
  -- By run of free adjacent seats a..b: a set x..e of one strands a
  -- seat exactly when x is a + 1 or e is b - 1 (strands()).
  local i = 1
  while i <= n do
    if st[i] then
      local a = i
      while not brk[i] and i < n and st[i + 1] do
        i = i + 1
      end
      local b = i
      for e = a, b do
        local sum = 0
        for x = e, math.max(a, e - MAXK + 1), -1 do
          local kk = e - x + 1
          sum = sum + score[x]
          if not any[kk] or sum < any[kk] then
            any[kk] = sum
          end
          if x ~= a + 1 and e ~= b - 1 and (not free[kk] or sum < free[kk]) then
            free[kk] = sum
          end
        end
      end
    end
    i = i + 1
  end
  row.bnd = {any = any, free = free}
  return any, free
end

-- take marks seat i of row free or not.
local function take(row, i, taken)
  row.free[i] = not taken
  row.bnd = nil
end

-- learn stores the bounds of every row read, after what was taken, and
-- how far the walk found the rows full.
local function learn()
  for _, w in pairs(walks) do
    if w.passedTo > w.first then
      redis.call('HSET', KEYS[5], w.field, w.passedTo .. ',' .. (w.at[w.passedTo] or w.oat))
    end
  end
  if #read == 0 then
    return
  end
  local fields = {}
  for _, r in ipairs(read) do
    local any, free = bounds(rows[r])
    local out = {}
    for kk = 1, MAXK do
      out[2 * kk - 1], out[2 * kk] = num(any[kk]), num(free[kk])
    end
    fields[#fields + 1] = tostring(r)
    fields[#fields + 1] = table.concat(out)
    if #fields >= 1000 then
      redis.call('HSET', KEYS[5], unpack(fields))
      fields = {}
    end
  end
  if #fields > 0 then
    redis.call('HSET', KEYS[5], unpack(fields))
  end
end

-- visit calls fn on each row that may hold a set of kk seats beating the
-- one in hand, reading it first, until none left can. A row not stored is
-- read when the walk of the order reaches it; a stored one waits as a
-- candidate keyed by its stored bound, and candidates are read lowest
-- first, before any row the walk reaches whose bound is above: the first
-- one read is then most often the set chosen. A row known to have only
-- sets that strand a seat waits for a last pass, which runs when no
-- orphan-free set was found.
local function visit(kk, fn)
  local w = walkOf(kk)
  local stranding, cands = {}, {}
  local low -- index in cands of the lowest candidate (row, key)
  local function lowest()
    low = nil
    for i = 1, #cands, 2 do
      local r, key = cands[i], cands[i + 1]
      if r and (not low or key < cands[low + 1] or (key == cands[low + 1] and r < cands[low])) then
        low = i
      end
    end
  end
  local j, walking = w.passedTo, true
  while true do
    local r, bound
    if walking then
      r, bound = entry(w, j)
      if not r or beaten(bound, r) then
        walking, r = false, nil
      end
    end
    if low and (not r or cands[low + 1] <= bound) then
      local cr, key = cands[low], cands[low + 1]
      if not walking and beaten(key, cr) then
        break -- so is every candidate left: none is below this one
      end
      cands[low] = false
      lowest()
      if not beaten(key, cr) then
        load(cr)
        fn(cr)
      end
    elseif r then
      j = j + 1
      local d, free
      local seen = rows[r]
      if seen then
        -- Read in this run: judged as it stands now.
        local any, fr = bounds(seen)
        d, free = any[kk] or -2, fr[kk] or -2
      else
        d, free = known(stored(w, j - 1), kk)
      end
      if d == -1 then
        load(r)
        fn(r)
      elseif d == -2 or beaten(d, r) then
        -- passed: nothing here beats the set in hand. Only a row full
        -- when this run began stays full: an apart request that finds
        -- too few seats gives back the ones it picked.
        if d == -2 and not seen and j - 1 == w.passedTo then
          w.passedTo = j
        end
      elseif avoid and free == -2 then
        if not bestR or bestS then
          stranding[#stranding + 1] = r
          stranding[#stranding + 1] = d
        end
      elseif not (avoid and beaten(free, r)) then
        local key = avoid and free or d
        cands[#cands + 1] = r
        cands[#cands + 1] = key
        if not low or key < cands[low + 1] or (key == cands[low + 1] and r < cands[low]) then
          low = #cands - 1
        end
      end
    else
      break
    end
  end
  if bestR and not bestS then
    return
  end
  -- Every set of these strands a seat, as the one in hand does (if any).
  for i = 1, #stranding, 2 do
    local r, d = stranding[i], stranding[i + 1]
    if not (bestR and (d > bestScore or (d == bestScore and r > bestR))) then
      load(r)
      fn(r)
    end
  end
end

-- choose answers the request of ARGV from at on.
local function choose(at)
  local orderNo, user, limit, nowMs = ARGV[at], ARGV[at + 1], tonumber(ARGV[at + 2]), ARGV[at + 3]
  k, cat, together = tonumber(ARGV[at + 4]), ARGV[at + 5], ARGV[at + 6] == '1'
  acc, avoid = ARGV[at + 7] == '1', ARGV[at + 8] == '1'
  if limit > 0 then
    local count = tonumber(redis.call('HGET', KEYS[2], user) or '0')
    if count + k > limit then
      return {'limit'}
    end
  end
  bestR = nil
  local chosen, stranded = {}, false
  if together then
    visit(k, function(r)
      local row = rows[r]
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
    end)
    if bestR then
      local row = rows[bestR]
      stranded = strands(row, bestI, bestI + k - 1)
      for i = bestI, bestI + k - 1 do
        chosen[#chosen + 1] = row.ids[i]
        take(row, i, true)
      end
    end
  else
    -- One seat at a time, each time over the rows by bound again (the seats
    -- picked before change which strand).
    local picks = {}
    local function scan(r)
      local row = rows[r]
      for i = 1, row.n do
        if eligible(row, i) and not beaten(row.score[i], r) then
          local s = avoid and strands(row, i, i)
          if better(s, row.score[i], r, i) then
            bestR, bestI, bestS, bestScore = r, i, s, row.score[i]
          end
        end
      end
    end
    for _ = 1, k do
      bestR = nil
      visit(1, scan)
      if not bestR then
        break
      end
      local row = rows[bestR]
      stranded = stranded or strands(row, bestI, bestI)
      take(row, bestI, true)
      picks[#picks + 1] = bestR
      picks[#picks + 1] = bestI
      chosen[#chosen + 1] = row.ids[bestI]
    end
    if #chosen < k then
      -- Not enough: the seats picked go back before counting what is left.
      for j = 1, #picks, 2 do
        take(rows[picks[j]], picks[j + 1], false)
      end
      chosen = {}
    end
  end

  if #chosen == 0 then
    -- What is left per category: free seats of the asked accessibility,
    -- and their longest stretch together. A row known to have no free seat
    -- is not read.
    local free, best, cats = {}, {}, {}
    for c in string.gmatch(idx[3] or '', '([^;]*);') do
      free[c], best[c] = 0, 0
      cats[#cats + 1] = c
    end
    -- The stored bounds of every row, in chunks for unpack.
    local all = {}
    for j = 1, nrows, 1000 do
      local rs = {}
      for r = j, math.min(j + 999, nrows) do
        rs[#rs + 1] = r
      end
      local got = redis.call('HMGET', KEYS[5], unpack(rs))
      for i = 1, #got do
        all[j + i - 1] = got[i]
      end
    end
    for r = 1, nrows do
      if rows[r] or known(all[r], 1) ~= -2 then
        local row = load(r)
        local run = 0
        for i = 1, row.n do
          local c = row.cat[i]
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
    end
    local out = {'none'}
    for _, c in ipairs(cats) do
      out[#out + 1] = c
      out[#out + 1] = tostring(free[c])
      out[#out + 1] = tostring(best[c])
    end
    return out
  end

  local value = '1|' .. orderNo .. '|' .. user .. '|' .. nowMs
  local fields = {}
  for i = 1, #chosen do
    fields[2 * i - 1] = chosen[i]
    fields[2 * i] = value
  end
  redis.call('HSET', KEYS[1], unpack(fields))
  redis.call('HINCRBY', KEYS[2], user, #chosen)
  local out = {'ok', stranded and '1' or '0'}
  for i = 1, #chosen do
    out[#out + 1] = chosen[i]
  end
  return out
end

local replies = {}
for at = 2, #ARGV, 9 do
  replies[#replies + 1] = choose(at)
end
learn()
return replies
