package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// progress reports what the bench is doing: a redrawn bar on a terminal,
// a plain line every few seconds otherwise (CI logs, files), nothing with
// --json (stdout then carries only the JSON).
type progress struct {
	mu  sync.Mutex
	w   io.Writer
	tty bool
}

func newProgress(w io.Writer, quiet bool) *progress {
	if quiet {
		return &progress{w: io.Discard}
	}
	return &progress{w: w, tty: isTerminal(w)}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// logf prints one line of narration.
func (p *progress) logf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

// task tracks one phase; status is polled for the counts to show.
type task struct {
	p      *progress
	label  string
	total  int64 // 0: unknown
	status func() (done int64, extra string)
	start  time.Time
	stop   chan struct{}
	wg     sync.WaitGroup
}

// Redraw and plain-line intervals.
const (
	ttyEvery   = 200 * time.Millisecond
	plainEvery = 5 * time.Second
)

// track starts reporting a phase until its done method is called.
func (p *progress) track(label string, total int64, status func() (int64, string)) *task {
	t := &task{p: p, label: label, total: total, status: status, start: time.Now(), stop: make(chan struct{})}
	every := plainEvery
	if p.tty {
		every = ttyEvery
	}
	t.wg.Go(func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-t.stop:
				return
			case <-tick.C:
				t.draw(false)
			}
		}
	})
	return t
}

func (t *task) draw(final bool) {
	done, extra := t.status()
	line := renderProgress(t.label, done, t.total, time.Since(t.start), extra, 24)
	t.p.mu.Lock()
	defer t.p.mu.Unlock()
	switch {
	case t.p.tty && final:
		fmt.Fprintf(t.p.w, "\r\033[K%s\n", line)
	case t.p.tty:
		fmt.Fprintf(t.p.w, "\r\033[K%s", line)
	default:
		fmt.Fprintf(t.p.w, "%s %s\n", time.Now().Format("15:04:05"), line)
	}
}

// done stops the reporting and prints the final state.
func (t *task) done() {
	close(t.stop)
	t.wg.Wait()
	t.draw(true)
}

// renderProgress is one progress line: "label [#####-----] 50/100 12.3/s 4.1s extra".
// With an unknown total there is no bar.
func renderProgress(label string, done, total int64, elapsed time.Duration, extra string, width int) string {
	var b strings.Builder
	b.WriteString(label)
	if total > 0 {
		filled := int(min(done, total) * int64(width) / total)
		fmt.Fprintf(&b, " [%s%s] %d/%d", strings.Repeat("#", filled), strings.Repeat("-", width-filled), done, total)
	} else {
		fmt.Fprintf(&b, " %d", done)
	}
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(done) / s
	}
	fmt.Fprintf(&b, " %.0f/s %.1fs", rate, elapsed.Seconds())
	if extra != "" {
		b.WriteString(" " + extra)
	}
	return b.String()
}
