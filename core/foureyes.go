package core

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Four eyes on money: a refund above the approval threshold and a
// write-off are asked for by one person and approved by another. "Another"
// is checked against accounts and keys, not only names: whoever creates a
// staff account chooses its first password, and whoever mints an API key
// holds its secret, so neither counts as a second person to what they made
// — directly, or through accounts made by accounts they made. Two people
// who agree to cheat are beyond any check; the audit log names both.

const (
	// ActorAPIPrefix starts the actor of what an API key does: api:<key prefix>.
	ActorAPIPrefix = "api:"
	// ActorCLI is the operator at the seatflow command line, the creator of
	// the first accounts: a shell on the server, not a person to compare.
	ActorCLI = "cli"
)

// ErrLinkedApproval refuses an approver whose account or key the requester
// made, or who made the requester's: one person could hold both.
var ErrLinkedApproval = &Error{Kind: KindForbidden, Code: "linked_approval",
	Message: "one of the two created the other's account or key: someone outside that pair must approve"}

// Creators tells who made an actor.
type Creators interface {
	// ActorCreator returns who created actor's staff account
	// (staff:<name>) or minted its API key (api:<prefix>): an actor, cli,
	// or "" when nobody is recorded.
	ActorCreator(ctx context.Context, actor string) (string, error)
}

// maxCreatorChain bounds the walk up from an account to the one that made
// it; real chains are a handful of admins long.
const maxCreatorChain = 64

// checkFourEyes refuses approver deciding what requester asked for (what
// names it in the message) when both could be one person.
func checkFourEyes(ctx context.Context, c Creators, requester, approver, what string) error {
	if approver == requester {
		return &Error{Kind: KindForbidden, Code: ErrSelfApproval.Code, Message: fmt.Sprintf(
			"%s was asked for by %s, so a second person must approve it", what, approver)}
	}
	requesters, err := holders(ctx, c, requester)
	if err != nil {
		return fmt.Errorf("four eyes on %s: %w", what, err)
	}
	approvers, err := holders(ctx, c, approver)
	if err != nil {
		return fmt.Errorf("four eyes on %s: %w", what, err)
	}
	for _, r := range requesters {
		for _, a := range approvers {
			if r == a {
				return &Error{Kind: KindForbidden, Code: ErrLinkedApproval.Code, Message: fmt.Sprintf(
					"%s was asked for by %s and approved by %s, both held by %s: someone else must approve it",
					what, requester, approver, r)}
			}
			for _, p := range [][2]string{{a, r}, {r, a}} {
				chain, err := creatorChain(ctx, c, p[0], p[1])
				if err != nil {
					return fmt.Errorf("four eyes on %s: %w", what, err)
				}
				if chain != nil {
					return &Error{Kind: KindForbidden, Code: ErrLinkedApproval.Code, Message: fmt.Sprintf(
						"%s was asked for by %s and %s created %s: someone outside that pair must approve it",
						what, requester, p[1], strings.Join(chain, ", which created "))}
				}
			}
		}
	}
	return nil
}

// holders is who may act as actor: the actor, and for an API key also the
// account that minted it, which holds its secret. Without that, a key would
// launder its minter: a refund asked for through the key and approved by an
// account the minter created links neither way by creation alone.
func holders(ctx context.Context, c Creators, actor string) ([]string, error) {
	if !strings.HasPrefix(actor, ActorAPIPrefix) {
		return []string{actor}, nil
	}
	minter, err := c.ActorCreator(ctx, actor)
	if err != nil || minter == "" || minter == ActorCLI {
		return []string{actor}, err
	}
	return []string{actor, minter}, nil
}

// creatorChain returns the actors from maker's first creation down to
// actor (maker excluded) when maker made actor, directly or through
// accounts it made; nil otherwise.
func creatorChain(ctx context.Context, c Creators, actor, maker string) ([]string, error) {
	chain := []string{actor}
	for cur := actor; len(chain) <= maxCreatorChain; {
		by, err := c.ActorCreator(ctx, cur)
		if err != nil {
			return nil, err
		}
		if by == maker {
			slices.Reverse(chain)
			return chain, nil
		}
		if by == "" {
			return nil, nil
		}
		chain = append(chain, by)
		cur = by
	}
	return nil, nil
}
