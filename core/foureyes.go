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
			if r.actor() == a.actor() {
				return &Error{Kind: KindForbidden, Code: ErrLinkedApproval.Code, Message: fmt.Sprintf(
					"%s was asked for by %s and approved by %s, both held by %s: someone else must approve it",
					what, requester, approver, r.actor())}
			}
			for _, made := range []struct{ maker, made lineage }{{a, r}, {r, a}} {
				if chain := made.made.madeBy(made.maker.actor()); chain != nil {
					return &Error{Kind: KindForbidden, Code: ErrLinkedApproval.Code, Message: fmt.Sprintf(
						"%s was asked for by %s and %s created %s: someone outside that pair must approve it",
						what, requester, made.maker.actor(), strings.Join(chain, ", which created "))}
				}
			}
		}
	}
	return nil
}

// lineage is an actor and who made it, up the chain: its account's or
// key's creator, that one's creator, and so on, read once per check.
type lineage []string

func (l lineage) actor() string { return l[0] }

// madeBy returns the actors from maker's first creation down to l's actor
// (maker excluded) when maker made it, directly or through accounts it
// made; nil otherwise.
func (l lineage) madeBy(maker string) []string {
	i := slices.Index(l[1:], maker)
	if i < 0 {
		return nil
	}
	chain := slices.Clone(l[:i+1])
	slices.Reverse(chain)
	return chain
}

// lineageOf walks actor's creators up to the first not recorded.
func lineageOf(ctx context.Context, c Creators, actor string) (lineage, error) {
	l := lineage{actor}
	for len(l) <= maxCreatorChain {
		by, err := c.ActorCreator(ctx, l[len(l)-1])
		if err != nil {
			return nil, err
		}
		if by == "" || slices.Contains(l, by) {
			break
		}
		l = append(l, by)
	}
	return l, nil
}

// holders is who may act as actor, each with its lineage: the actor, and
// for an API key also the account that minted it, which holds its secret.
// Without that, a key would launder its minter: a refund asked for through
// the key and approved by an account the minter created links neither way
// by creation alone.
func holders(ctx context.Context, c Creators, actor string) ([]lineage, error) {
	l, err := lineageOf(ctx, c, actor)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(actor, ActorAPIPrefix) || len(l) < 2 || l[1] == ActorCLI {
		return []lineage{l}, nil
	}
	// The minter's lineage is the key's without the key.
	return []lineage{l, l[1:]}, nil
}
