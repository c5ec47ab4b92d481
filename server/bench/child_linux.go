package bench

import "syscall"

// childAttr makes the kernel send the server SIGTERM if the bench dies
// without stopping it, so no orphan keeps the port and the database.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
