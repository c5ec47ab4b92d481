// Package core is SeatFlow's engine: the order state machine, seat holds,
// the timeout chain and the payment callback. It knows nothing about HTTP
// and talks to its stores through the small interfaces declared in ports.go,
// so the same rules run on MariaDB+Redis+RocketMQ and on the embedded stack.
package core
