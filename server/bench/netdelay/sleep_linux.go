package netdelay

import (
	"syscall"
	"time"
)

// prSetTimerSlack is prctl's PR_SET_TIMERSLACK (linux/prctl.h).
const prSetTimerSlack = 29

// preciseThread drops the calling thread's timer slack from the default
// 50 µs to 1 ns, so its nanosleeps end when asked. Best effort: a kernel
// that refuses keeps the default slack.
func preciseThread() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
}

// nanosleep blocks the calling thread for d (EINTR cuts it short; the
// clock then sees its head not due yet and sleeps again).
func nanosleep(d time.Duration) {
	ts := syscall.NsecToTimespec(int64(d))
	_ = syscall.Nanosleep(&ts, nil)
}
