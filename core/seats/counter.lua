-- Prelude shared by the scripts that free or move a seat (prepended in Go).

-- parse splits a stored seat value "state|orderNo|userID|lockMs".
local function parse(v)
  return string.match(v, '^(%d)|([^|]*)|([^|]*)|(%d+)$')
end

-- uncount takes one seat off a user's counter; the field goes at zero so a
-- counter never goes negative and released users leave no residue.
local function uncount(key, user)
  if redis.call('HINCRBY', key, user, -1) <= 0 then
    redis.call('HDEL', key, user)
  end
end
