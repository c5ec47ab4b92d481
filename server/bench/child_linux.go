package bench

import "syscall"

// childAttr makes the kernel send the server SIGTERM if the bench dies
// without stopping it, so no orphan keeps the port and the database.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// fdLimit is the process's descriptor limit (RLIMIT_NOFILE, soft; Go
// raises it to the hard one at start), 0 when unknown.
func fdLimit() int {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0
	}
	return int(min(r.Cur, 1<<30))
}
