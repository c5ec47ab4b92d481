package core

import "time"

// HopState says whether the latest hop's timeout message is known to be
// sent. A claim records it in the same conditional update that moves the
// hop, so a crash between the claim and the send leaves a trace: the next
// delivery of the previous hop, or the reconcile sweep, sends the hop
// (resendHop) instead of letting the chain end.
type HopState int

const (
	HopSent     HopState = 0 // sent, or nothing to send
	HopSending  HopState = 1 // claimed; its sender has not confirmed the send
	HopDeferred HopState = 2 // claimed by an early delivery: sent from ResendAt on
)

// TimeoutSendLease is how long a claimed send belongs to its claimer before
// a redelivery or the sweep may send the hop instead. It exceeds the longest
// a send takes (the RocketMQ producer's 3 s timeout); a claimer slower than
// that makes the hop go out twice, and only one of the two can claim the
// hop after it.
const TimeoutSendLease = 5 * time.Second

// HopSend is what a claim records about its hop's message.
type HopSend struct {
	DueAt    time.Time // when the message is (to be) due
	State    HopState  // HopSending or HopDeferred
	ResendAt time.Time // from then on anyone may send the hop
}

// HopClaim is one order's claim of its next hop (ClaimTimeoutHops).
type HopClaim struct {
	OrderNo  string
	From, To int
	Send     HopSend
}

// HopRef names one order's hop.
type HopRef struct {
	OrderNo string
	Hop     int
}

// earlyTolerance is how far before its due time a message may arrive and
// still count as on time: the shortest level (clock skew between instances
// and timer precision stay well within it), and at most half the message's
// own delay, so that a broker delivering a 1 s hop at once is seen too.
func (p DelayPolicy) earlyTolerance(msg TimeoutMsg) time.Duration {
	tol := time.Second
	if len(p.Levels) > 0 {
		tol = p.Levels[0]
	}
	if !msg.SentAt.IsZero() {
		tol = min(tol, msg.DueAt.Sub(msg.SentAt)/2)
	}
	return tol
}

// deliveredEarly reports how early msg arrived at now, when that is more
// than the policy can explain: a broker ignoring the delay property, or a
// level table that differs from the broker's. Messages without a due time
// (sent by an older version) are never early.
func (p DelayPolicy) deliveredEarly(msg TimeoutMsg, now time.Time) (time.Duration, bool) {
	if msg.DueAt.IsZero() {
		return 0, false
	}
	early := msg.DueAt.Sub(now)
	return early, early > p.earlyTolerance(msg)
}
