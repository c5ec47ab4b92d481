package core_test

import (
	"context"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"seatflow/core"
	"seatflow/core/seats"
	"seatflow/core/stacktest"
)

// bestScriptOf matches best.lua (seats, limit, blocked, index and bounds
// keys of the show) run for any order of the show.
func bestScriptOf(showID int64) func(redis.Cmder) bool {
	return func(cmd redis.Cmder) bool {
		keys, _, ok := stacktest.ScriptCall(cmd)
		return ok && slices.Equal(keys, []string{seats.KeySeats(showID), seats.KeyLimit(showID),
			seats.KeyBlocked(showID), seats.KeyBest(showID), seats.KeyBestBounds(showID)})
	}
}

// TestFaultChooseReplyLost loses the reply of best.lua after it chose and
// locked seats: the engine never learns which, and must still free them
// (by the order number) before it answers, leaving nothing for reconcile.
func TestFaultChooseReplyLost(t *testing.T) {
	cases := []struct {
		name        string
		cancelsCtx  bool // the request is cancelled while it waits for the reply
		releaseLost bool // the release by order number is lost once too, on its way
	}{
		{name: "read timeout"},
		{name: "read timeout, request cancelled", cancelsCtx: true},
		{name: "read timeout, the release lost on its way once", releaseLost: true},
	}
	stacktest.EachRedis(t, func(t *testing.T, st *stacktest.Stack) {
		for _, tc := range cases {
			t.Logf("case %s", tc.name)
			func() {
				f := newFixture(t, st, core.Config{})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				best := func(ctx context.Context, user int64) (core.Order, error) {
					o, _, err := f.eng.PlaceBest(ctx, core.BestAvailableRequest{
						PlaceRequest: core.PlaceRequest{UserID: user, ShowID: f.show.ID}, Count: 2, Together: true})
					return o, err
				}
				// The script is cached and the index stored: the fault hits
				// the EVALSHA that chooses.
				if _, err := best(ctx, 9); err != nil {
					t.Fatal(err)
				}
				var script redis.Cmder
				var reply []string // what the script answered, lost to the engine
				fault := st.InjectRedis(&stacktest.RedisFault{
					Match: func(cmd redis.Cmder) bool {
						if !bestScriptOf(f.show.ID)(cmd) {
							return false
						}
						script = cmd
						return true
					},
					After: func(ctx context.Context, err error) error {
						if err != nil {
							t.Errorf("the choose script itself failed: %v", err)
						}
						// One reply per request of the batch: this one alone.
						batch, _ := script.(*redis.Cmd).Slice()
						if len(batch) == 1 {
							items, _ := batch[0].([]any)
							for _, v := range items {
								s, _ := v.(string)
								reply = append(reply, s)
							}
						}
						if tc.cancelsCtx {
							cancel()
						}
						return stacktest.ErrReadTimeout
					}})
				release := &stacktest.RedisFault{Match: heldScriptOf(f.show.ID, "")}
				if tc.releaseLost {
					release.Lost = true
					st.InjectRedis(release)
				}
				_, err := best(ctx, 1)
				if !fault.Fired() || (tc.releaseLost && !release.Fired()) {
					t.Fatal("a fault never hit its script")
				}
				if core.ErrorKind(err) != core.KindUnavailable {
					t.Fatalf("place best with its reply lost: %v, want a store_unavailable error", err)
				}
				if len(reply) != 4 || reply[0] != "ok" {
					t.Fatalf("the choose script answered %v, want ok and two seats", reply)
				}
				// The script ran, the order does not exist: nothing may stay
				// locked or counted for it.
				f.wantSeats(t, core.SeatAvailable, reply[2:]...)
				f.wantCounter(t, 1, 0)
				f.checkInvariants(t)
				o, err := best(context.Background(), 2) // another buyer gets them at once
				if err != nil || !slices.Equal(o.SeatIDs, slices.Sorted(slices.Values(reply[2:]))) {
					t.Fatalf("the next buyer got %v (%v), want %v", o.SeatIDs, err, reply[2:])
				}
				f.checkInvariants(t)
			}()
		}
	})
}
