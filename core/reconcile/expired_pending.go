package reconcile

import (
	"context"
	"fmt"
	"time"

	"seatflow/core"
	"seatflow/core/store"
)

// ExpiredPending finds orders still pending after their expiry — their
// timeout message was lost, never sent, or is late — and ends them through
// the engine's cancel-and-release, the very path a timeout takes. It is the
// only check of the fast sweep, so a lost message costs seconds.
//
// Cost: a range of idx_status_expire (status = 0, expire_at <= now), paged by
// (expire_at, id): only the expired orders are read.
type ExpiredPending struct{}

func (ExpiredPending) Name() string { return CheckExpiredPending }

func (c ExpiredPending) Run(ctx context.Context, env *Env, dryRun bool) (Result, error) {
	var (
		res Result
		cur store.ExpiredRef
	)
	for {
		page, err := env.DB.ExpiredPendingAfter(ctx, env.Now, cur, env.PageSize)
		if err != nil {
			return res, err
		}
		for _, o := range page {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			it := Item{OrderNo: o.OrderNo, ShowID: o.ShowID, UserID: o.UserID, Action: ActionCancel}
			it.say(fmt.Sprintf("pending %s past its expiry", env.Now.Sub(o.ExpireAt).Round(time.Millisecond)),
				core.Say("reconcile.note.expired", core.ArgDuration(env.Now.Sub(o.ExpireAt))))
			if !env.wants(c.Name(), it) {
				continue
			}
			if !dryRun {
				c.cancel(ctx, env, &it)
			}
			res.add(env, c.Name(), it)
		}
		if len(page) < env.PageSize {
			return res, nil
		}
		cur = page[len(page)-1]
	}
}

// cancel ends one order. Losing the conditional update is not an error: a
// payment or the timeout ended the order first, which is what reconcile wants.
// The fast sweep cancels as core.ActorSweep: the order row then tells it
// from a full run, and so does the expiry-lag histogram's path label.
func (c ExpiredPending) cancel(ctx context.Context, env *Env, it *Item) {
	actor := Actor
	if env.Trigger == TriggerSweep {
		actor = core.ActorSweep
	}
	r, err := env.Engine.CancelAndRelease(ctx, core.CancelRequest{OrderNo: it.OrderNo,
		Reason: core.ReasonReconcile, Actor: actor})
	if err != nil {
		it.fail(err)
		return
	}
	if !r.Won {
		it.say("already "+r.Order.Status.String(), core.Say("reconcile.note.already", statusWord(r.Order.Status)))
		return
	}
	it.Fixed = true
	it.SeatIDs = r.Order.SeatIDs
	if err := env.repaired(ctx, c.Name(), it.OrderNo, map[string]any{"action": ActionCancel,
		"expire_at": r.Order.ExpireAt.Format(time.RFC3339Nano)}); err != nil {
		it.fail(err)
	}
}
