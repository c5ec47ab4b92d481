package reconcile

import (
	"context"
	"time"

	"seatflow/core"
)

// SeatStore is what reconcile reads and repairs in the seat store: the
// engine's interface plus counters, block times and the guarded repairs that
// leave alone whatever changed since a check read it. Both seat stores
// (seats.Store on Redis, seats.Memory in process) implement it.
type SeatStore interface {
	core.SeatStore
	Limits(ctx context.Context, showID int64) (map[int64]int, error)
	SetLimitIf(ctx context.Context, showID, userID int64, expected, n int) (bool, error)
	ReleaseIfLockedBefore(ctx context.Context, showID int64, seatID, orderNo string, before time.Time) (bool, error)
	BlockEntries(ctx context.Context, showID int64) ([]core.SeatBlock, error)
	RestoreBlocks(ctx context.Context, showID int64, blocks []core.SeatBlock, seen map[string]core.SeatBlock) ([]string, error)
	UnblockIfBlockedBefore(ctx context.Context, showID int64, seatIDs []string, before time.Time) ([]string, error)
	DeleteShow(ctx context.Context, showID int64) error
}

// SeatReader is what the invariant checks read of the seat store.
type SeatReader interface {
	Holds(ctx context.Context, showID int64) ([]core.SeatHold, error)
	Limits(ctx context.Context, showID int64) (map[int64]int, error)
	Blocks(ctx context.Context, showID int64) (map[string]string, error)
}

// QueueStore is what retention removes of the shows' waiting rooms
// (admission.Store): a show's queue goes with its seat keys.
type QueueStore interface {
	Delete(ctx context.Context, showID int64) error
}
