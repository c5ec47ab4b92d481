//go:build !linux

package bench

import "syscall"

// childAttr: only Linux can tie the child's life to the bench's.
func childAttr() *syscall.SysProcAttr { return nil }

// fdLimit: unknown here; the rush does not check its connections against it.
func fdLimit() int { return 0 }
