package seats

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
)

//go:embed limit_cas.lua
var limitCASLua string

// limitCAS holds no state but the script and its hash: one serves every Store.
var limitCAS = redis.NewScript(limitCASLua)

// SetLimitIf sets one user's purchase counter to n (0 removes it) only if
// it still is expected (a missing counter is 0), in one script; it reports
// whether it wrote. A counter moved meanwhile by a Lock, Release or sell is
// left as it is.
func (s *Store) SetLimitIf(ctx context.Context, showID, userID int64, expected, n int) (bool, error) {
	if n < 0 || expected < 0 {
		return false, core.Invalidf("purchase counter %d (expected %d) is negative", n, expected)
	}
	wrote, err := limitCAS.Run(ctx, s.rdb, []string{KeyLimit(showID)}, strconv.FormatInt(userID, 10), expected, n).Int()
	if err != nil {
		return false, wrap(fmt.Sprintf("set purchase counter of user %d in show %d", userID, showID), err)
	}
	return wrote == 1, nil
}
