package netdelay

import (
	"runtime"
	"sync"
	"time"
)

// clock releases waiting writers at their due time with the precision of
// the kernel's nanosleep (tens of µs here). Go's timers are woken through
// epoll's millisecond timeout when the process is otherwise idle, so a
// 0.5 ms time.Sleep takes 1.1 ms on this machine, which would more than
// double a 1 ms round trip.
//
// Every chunk of one proxy waits the same delay from when it was read, so
// due times arrive in order: a FIFO is the whole schedule, and one OS
// thread sleeping for the head of the queue serves every connection.
type clock struct {
	mu   sync.Mutex
	q    []wakeup
	kick chan struct{} // a wakeup was queued while the thread idled
	stop chan struct{}
	done chan struct{}
}

type wakeup struct {
	due time.Time
	ch  chan struct{} // the waiting writer's, buffered 1
}

func newClock() *clock {
	c := &clock{kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// wait blocks until due; ch is the caller's own channel (buffered 1),
// reused across calls. false when the clock was stopped.
func (c *clock) wait(due time.Time, ch chan struct{}) bool {
	if time.Until(due) <= 0 {
		return true
	}
	c.mu.Lock()
	c.q = append(c.q, wakeup{due: due, ch: ch})
	c.mu.Unlock()
	select {
	case c.kick <- struct{}{}:
	default:
	}
	select {
	case <-ch:
		return true
	case <-c.done:
		return false
	}
}

func (c *clock) run() {
	defer close(c.done)
	// The thread blocks in nanosleep: keep it out of the goroutines' way.
	runtime.LockOSThread()
	preciseThread()
	for {
		c.mu.Lock()
		if len(c.q) == 0 {
			c.mu.Unlock()
			select {
			case <-c.kick:
				continue
			case <-c.stop:
				return
			}
		}
		head := c.q[0]
		c.mu.Unlock()
		if d := time.Until(head.due); d > 0 {
			nanosleep(d)
		}
		now := time.Now()
		c.mu.Lock()
		n := 0
		for n < len(c.q) && !c.q[n].due.After(now) {
			c.q[n].ch <- struct{}{}
			n++
		}
		c.q = append(c.q[:0], c.q[n:]...)
		c.mu.Unlock()
		select {
		case <-c.stop:
			return
		default:
		}
	}
}

func (c *clock) close() {
	close(c.stop)
	<-c.done
}
