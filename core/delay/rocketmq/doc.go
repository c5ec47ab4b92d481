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
// Delivery is at least once. The broker replays delayed messages after a
// restart, offsets are committed every few seconds, a handler error sends the
// message back for a retry (~10 s, then longer), and Close does not wait for
// the broker to learn what was consumed. Handlers must be idempotent: the
// engine's timeout handler ignores orders that are no longer pending.
//
// New creates the topic when the name server has no route for it. A
// brand-new consumer group starts at the end of the topic, which is enough
// because delayed messages enter it only when due; one that became due
// before (or while) the group first joined may be skipped and is left to
// reconcile.
package rocketmq
