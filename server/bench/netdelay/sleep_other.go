//go:build !linux

package netdelay

import "time"

// The bench runs on Linux only; elsewhere the Go timer does.

func preciseThread() {}

func nanosleep(d time.Duration) { time.Sleep(d) }
