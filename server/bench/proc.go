package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memStatus is what the bench reads from /proc/<pid>/status, in bytes.
type memStatus struct {
	RSS int64 // VmRSS: resident now
	HWM int64 // VmHWM: the kernel's peak resident size since start
}

// parseStatus reads VmRSS and VmHWM ("VmRSS:\t  12345 kB") from the text of
// /proc/<pid>/status; a process without them (a zombie) reads as zero.
func parseStatus(text string) (memStatus, error) {
	var m memStatus
	for line := range strings.Lines(text) {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return m, fmt.Errorf("proc status: %s: unexpected %q", name, strings.TrimSpace(rest))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return m, fmt.Errorf("proc status: %s: %w", name, err)
		}
		if name == "VmRSS" {
			m.RSS = kb << 10
		} else {
			m.HWM = kb << 10
		}
	}
	return m, nil
}

// clockTicks is USER_HZ, 100 on every Linux the bench targets; reading it
// properly needs sysconf (cgo), and the figure is only a breakdown.
const clockTicks = 100

// parseStatCPU returns user+system CPU time from the text of /proc/<pid>/stat.
// The command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseStatCPU(text string) (time.Duration, error) {
	i := strings.LastIndexByte(text, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: no ')' in %q", text)
	}
	f := strings.Fields(text[i+1:])
	// f[0] is field 3 (state): utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name, want at least 13", len(f))
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("proc stat: utime %q stime %q: not numbers", f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / clockTicks, nil
}

// procSampler follows one process's memory while the bench runs: the
// kernel's VmHWM only ever grows, so a per-scenario peak needs samples.
type procSampler struct {
	pid  int
	mu   sync.Mutex
	peak int64 // highest VmRSS sampled since the last reset
	last memStatus
	err  error
}

func (p *procSampler) sample() {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.pid))
	var m memStatus
	if err == nil {
		m, err = parseStatus(string(b))
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.err = err
		return
	}
	p.last = m
	p.peak = max(p.peak, m.RSS)
}

// run samples every interval until ctx ends.
func (p *procSampler) run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		p.sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// memWindow is the memory seen over one scenario.
type memWindow struct {
	PeakRSS int64 `json:"peak_rss_bytes"` // highest VmRSS sampled in the window
	HWM     int64 `json:"vm_hwm_bytes"`   // VmHWM at the window's end (peak since the process started)
	EndRSS  int64 `json:"end_rss_bytes"`
}

// reset starts a new window.
func (p *procSampler) reset() {
	p.sample()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peak = p.last.RSS
}

// window ends the current window.
func (p *procSampler) window() (memWindow, error) {
	p.sample()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return memWindow{}, fmt.Errorf("sampling memory of pid %d: %w", p.pid, p.err)
	}
	return memWindow{PeakRSS: p.peak, HWM: p.last.HWM, EndRSS: p.last.RSS}, nil
}

// cpu returns the process's CPU time so far.
func (p *procSampler) cpu() (time.Duration, error) { return readProcCPU(p.pid) }

// readProcCPU returns the user+system CPU time of process pid so far, all
// its threads together.
func readProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("reading CPU time of pid %d: %w", pid, err)
	}
	return parseStatCPU(string(b))
}

// Machine names the computer a run was measured on.
type Machine struct {
	NProc int    `json:"nproc"`
	CPU   string `json:"cpu"`
	Go    string `json:"go"`
}

// machine reads the CPU model from /proc/cpuinfo (empty when unreadable).
func machine() Machine {
	m := Machine{NProc: runtime.NumCPU(), Go: runtime.Version()}
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return m
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			m.CPU = strings.TrimSpace(v)
			break
		}
	}
	return m
}

// loadAvg is the 1, 5 and 15 minute load averages from /proc/loadavg: the
// machine is shared, so a report says how busy it was ("" when unreadable).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}
