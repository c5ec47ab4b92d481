package reconcile

import (
	"context"
	"fmt"
	"strconv"

	"seatflow/core"
	"seatflow/core/store"
)

// OpenDiscrepancy reports the unresolved discrepancies — payments that lost
// to a cancel or did not match their order. Money was taken, so only a
// person may settle them (a refund, in the console); the check fixes
// nothing and keeps them visible on every run.
//
// Cost: a count and the newest page of a range of idx_status_created
// (status = 'open'): only the open ones are read.
type OpenDiscrepancy struct{}

func (OpenDiscrepancy) Name() string { return CheckOpenDiscrepancy }

func (c OpenDiscrepancy) Run(ctx context.Context, env *Env, _ bool) (Result, error) {
	var res Result
	n, err := env.DB.OpenDiscrepancyCount(ctx)
	if err != nil || n == 0 {
		return res, err
	}
	sample, err := env.DB.Discrepancies(ctx, store.DiscrepancyOpen, env.SampleSize, 0)
	if err != nil {
		return res, err
	}
	for _, d := range sample {
		it := Item{OrderNo: d.OrderNo, Action: ActionReport}
		it.say(fmt.Sprintf("%s: txn %s, %d cents, open since %s", d.Kind, d.TxnID, d.AmountCents,
			d.CreatedAt.Format("2006-01-02 15:04:05Z")),
			core.Say("reconcile.note.discrepancy", core.ArgWord("disc.kind."+string(d.Kind)), core.ArgText(d.TxnID),
				core.ArgText(strconv.FormatInt(d.AmountCents, 10)), core.ArgTime(d.CreatedAt)))
		if env.wants(c.Name(), it) {
			res.add(env, c.Name(), it)
		}
	}
	// The sample holds at most SampleSize; the count is the whole story,
	// unless the run was asked for some items only.
	if env.only == nil {
		res.Found = n
	}
	return res, nil
}
