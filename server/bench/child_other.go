//go:build !linux

package bench

import "syscall"

// childAttr: only Linux can tie the child's life to the bench's.
func childAttr() *syscall.SysProcAttr { return nil }
