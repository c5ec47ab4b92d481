// Package admission is SeatFlow's side of the on-sale rush: what decides
// who may reach the engine and when. It imports no HTTP.
//
//   - queue.go: a show's waiting room (settings, entries, positions, the
//     head that admits) and the Store that keeps it: in process on the
//     embedded stack (memory.go), in the seat store's Redis otherwise
//     (redis.go, one hash tag per show).
//   - fairness.go: the pre-queue shuffle, its published seed and its proof.
//   - token.go: signed tickets and admissions, verified with no store call.
//   - controller.go: the admission rate, driven by the engine's measured
//     placement latency and timeout backlog.
//   - limiter.go: the always-on adaptive concurrency limit of API work.
package admission

import (
	"context"
	"errors"
	"time"
)

// Mode says when a show's queue engages.
type Mode string

const (
	// ModeAlways sends every buyer of the show through the queue.
	ModeAlways Mode = "always"
	// ModeOverload engages the queue only while the engine is overloaded:
	// otherwise a join is admitted at once and orders need no admission.
	ModeOverload Mode = "overload"
)

// DefaultWindow is how long an admitted buyer may place by default.
const DefaultWindow = 10 * time.Minute

// Settings are one show's queue settings.
type Settings struct {
	Enabled bool
	Mode    Mode
	// OpensAt, when set, makes joins before it a pre-queue whose order is
	// drawn at OpensAt (fairness.go); joins after it are first come, first
	// served. Zero: no pre-queue.
	OpensAt time.Time
	// Window is how long an admitted buyer may place (DefaultWindow when 0).
	Window time.Duration
	// Paused stops admissions; joins and polls go on.
	Paused bool
	// SeedHash is the hex SHA-256 of the shuffle seed, published from the
	// moment a queue with OpensAt is enabled; Seed (hex) is published only
	// once the pre-queue has been shuffled. Both are set by the Store.
	SeedHash, Seed string
}

// Entry is one buyer's place in one show's queue. A user has at most one
// entry per show: joining again returns the same entry.
type Entry struct {
	Show, User int64
	// Seq is the 1-based join order. Pre-queue entries are exactly Seq
	// 1..PreJoined: once one entry has joined after opening (or the
	// pre-queue was shuffled), no later join is a pre-queue one.
	Seq      int64
	Pre      bool
	JoinedAt time.Time
	// Ticket is what the buyer polls with (token.go); the Store keeps the
	// one given at the first join so a second join returns the same.
	Ticket string
}

// Status is a show's queue at one moment, read in one store call.
type Status struct {
	Settings
	Joined    int64 // entries, the pre-queue's included
	PreJoined int64 // entries that joined before OpensAt
	Shuffled  bool  // the pre-queue's order is drawn (positions known)
	// Admitted is the head: positions 1..Admitted are admitted.
	Admitted int64
	// Placed counts admitted buyers whose placement succeeded.
	Placed int64
}

// Store keeps the waiting rooms. Every method is atomic on its own; the
// implementations are safe for concurrent use by several instances
// (Redis) or goroutines (memory).
type Store interface {
	// Configure writes a show's settings and returns its status. Enabling
	// with an OpensAt while no seed exists draws the seed (kept secret,
	// its hash published); the seed never changes once drawn.
	Configure(ctx context.Context, show int64, s Settings) (Status, error)
	// Status reads a show's queue; ErrNoQueue if it was never configured.
	Status(ctx context.Context, show int64) (Status, error)
	// Join adds the user to the show's queue, or returns the entry the
	// user already has (created false). ticket is stored on creation only.
	// The entry is pre-queue when now is before OpensAt and no entry has
	// joined after opening. ErrNoQueue when the queue is not enabled.
	Join(ctx context.Context, show, user int64, ticket string, now time.Time) (e Entry, created bool, err error)
	// Position is the entry's place in line, 1-based: Seq after opening,
	// the drawn rank for a pre-queue entry, 0 while that is not drawn.
	Position(ctx context.Context, e Entry) (int64, error)
	// Shuffle draws the pre-queue's order (fairness.go) once now is at or
	// past OpensAt: every pre-queue entry gets its position and the seed
	// is published. It runs once however many instances call it; false
	// when there was nothing to do (already drawn, not yet time).
	Shuffle(ctx context.Context, show int64, now time.Time) (bool, error)
	// Advance moves the head by up to n (never past Joined, never while
	// the pre-queue is not drawn) and returns the new head.
	Advance(ctx context.Context, show int64, n int64) (int64, error)
	// AdmittedAt stamps the moment the user's entry was first seen
	// admitted (now, the first time) and returns it; the admission window
	// counts from it.
	AdmittedAt(ctx context.Context, show, user int64, now time.Time) (time.Time, error)
	// ClaimPlacement lets one placement at a time use the user's
	// admission, across instances: ClaimUsed when a placement with it
	// succeeded already, ClaimBusy while another holder's claim runs
	// (until its until), else the claim is holder's until until.
	ClaimPlacement(ctx context.Context, show, user int64, holder string, until, now time.Time) (Claim, error)
	// EndPlacement ends holder's claim. placed records the admission as
	// used (first false if it was recorded before); otherwise the claim
	// is dropped and the admission stays usable (a 409 retry).
	EndPlacement(ctx context.Context, show, user int64, holder string, placed bool) (first bool, err error)
	// Entries returns every entry in Seq order with its position, for
	// verification (seatflow queue verify) and the console.
	Entries(ctx context.Context, show int64) ([]Entry, []int64, error)
	// Shows lists the shows whose queue is enabled.
	Shows(ctx context.Context) ([]int64, error)
	// Delete removes everything of a show's queue, as retention removes
	// its seat keys once the show is over; deleting what is gone already
	// is not an error.
	Delete(ctx context.Context, show int64) error
}

// Claim is what ClaimPlacement found.
type Claim int

const (
	ClaimTaken Claim = iota // the claim is the caller's
	ClaimBusy               // another placement holds it
	ClaimUsed               // the admission was used by a placement
)

// ErrNoQueue: the show has no enabled queue.
var ErrNoQueue = errors.New("admission: the show has no queue")
