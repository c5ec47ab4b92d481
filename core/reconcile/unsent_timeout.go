package reconcile

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"seatflow/core"
)

// UnsentTimeout sends the latest timeout hop of pending orders whose send
// was never confirmed — the process died between claiming the hop and
// sending it, or the send failed and no redelivery came — or was deferred
// by an early delivery and is now due. It runs in the fast sweep, so a
// crash costs the chain the send lease plus one sweep period, not the
// order's expiry plus the grace.
//
// Cost: a range of idx_timeout_send (timeout_send in 1, 2; status 0), which
// holds only the few orders with a send open.
type UnsentTimeout struct{}

func (UnsentTimeout) Name() string { return CheckUnsentTimeout }

func (c UnsentTimeout) Run(ctx context.Context, env *Env, dryRun bool) (Result, error) {
	var res Result
	// A resent order leaves the range (its resend time moves past Now), so
	// each page starts again from the front; seen stops a send that failed
	// from being tried twice in one run.
	seen := make(map[string]bool)
	for {
		page, err := env.DB.UnsentTimeouts(ctx, env.Now, env.PageSize)
		if err != nil {
			return res, err
		}
		fresh := 0
		for _, o := range page {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			if seen[o.OrderNo] {
				continue
			}
			seen[o.OrderNo] = true
			fresh++
			it := Item{OrderNo: o.OrderNo, ShowID: o.ShowID, UserID: o.UserID, Action: ActionResend}
			it.say(fmt.Sprintf("hop %d unsent since %s", o.TimeoutHop, o.TimeoutResendAt.Format(time.RFC3339Nano)),
				core.Say("reconcile.note.unsent", core.ArgText(strconv.Itoa(o.TimeoutHop)), core.ArgTime(o.TimeoutResendAt)))
			if !env.wants(c.Name(), it) {
				continue
			}
			if !dryRun {
				c.resend(ctx, env, &it)
			}
			res.add(env, c.Name(), it)
		}
		if len(page) < env.PageSize || fresh == 0 || dryRun {
			return res, nil
		}
	}
}

// resend sends the hop through the engine. Losing it to a redelivery that
// sent it first is not an error: the chain goes on either way.
func (c UnsentTimeout) resend(ctx context.Context, env *Env, it *Item) {
	sent, err := env.Engine.ResendTimeout(ctx, it.OrderNo)
	if err != nil {
		it.fail(err)
		return
	}
	if !sent {
		it.say("sent by another", core.Say("reconcile.note.sent_by_another"))
		return
	}
	it.Fixed = true
	if err := env.repaired(ctx, c.Name(), it.OrderNo, map[string]any{"action": ActionResend}); err != nil {
		it.fail(err)
	}
}
