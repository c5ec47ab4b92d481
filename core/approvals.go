package core

import "context"

// MayApprove reports whether approver may decide what requester asked for
// (a refund request, a write-off) under the four-eyes rules: nil when they
// may, else the self_approval or linked_approval error the decision itself
// would get. The approvals inbox asks before it offers a decision, so
// nobody is shown a button that would only be refused.
func MayApprove(ctx context.Context, c Creators, requester, approver string) error {
	return checkFourEyes(ctx, c, requester, approver, "the request")
}
