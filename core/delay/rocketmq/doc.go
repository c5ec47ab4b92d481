// Package rocketmq is core.DelayQueue on Apache RocketMQ (rocketmq-client-go/v2,
// remoting protocol straight to the name server and broker).
//
// Two ways to wait, chosen per message by Send's level argument:
//
//   - Levels (level > 0): the broker's fixed messageDelayLevel table
//     (default 1s 5s 10s 30s 1m ... 2h; level 1 = 1s). Works on every broker;
//     the engine re-arms with the remaining time (core.DelayPolicy) until the
//     order's expire_time is reached. Each hop lands ~100 ms after its level.
//   - Timer (level == 0): a RocketMQ 5 timer message (TIMER_DELIVER_MS =
//     now+delay), exact to the broker's timerPrecisionMs, never early, at most
//     timerMaxDelaySec (3 days by default) ahead.
//
// A message carries the timeouts of one or more orders (body.go); the
// handler gets them in one call and answers for each.
//
// Delivery is at least once. The broker replays delayed messages after a
// restart, offsets are committed every few seconds, a handler error sends the
// message back for a retry (~10 s, then longer) — or, when only some orders
// of a batch failed, sends those again each as a message of its own (so a
// poison order reaches the dead-letter topic alone) — and Close does not
// wait for the broker to learn what was consumed. Handlers must be idempotent: the
// engine's timeout handler ignores orders that are no longer pending. A
// restart never counts as a failed attempt: Close lets running handlers
// finish, and a message delivered while it closes is read again, not sent
// back for a retry.
//
// New finds the masters of the configured cluster through the name servers
// and creates the timeout topic (and Consume the group's retry topic) on
// every one that lacks it, unless topic creation is off, when a missing
// topic is an error. A brand-new consumer group starts at the messages
// stored within a lookback window (Config.NewGroupLookback), so one that
// became due before the group first joined is still delivered.
package rocketmq
