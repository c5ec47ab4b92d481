package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"
)

// A JVM's just-in-time compiler threads (HotSpot names them "C1
// CompilerThreadN" and "C2 CompilerThreadN"; the kernel keeps 15
// characters of a name) run while its code is still warming up: a broker
// started a minute before cost 396 µs an order placed, its C2 compiler
// thread busy at 40–87 % of a core, and 71 µs three runs later. The
// ledger reports that share apart, so a figure at steady state is read
// without it.

// jitThread tells whether a thread's name (the comm in its stat) is one of
// HotSpot's compiler threads.
func jitThread(comm string) bool {
	return strings.HasPrefix(comm, "C1 CompilerThre") || strings.HasPrefix(comm, "C2 CompilerThre")
}

// readJITCPU sums the CPU time of pid's compiler threads (0 for a process
// that has none). A thread that exits between listing and reading is
// skipped: the time of a compiler thread that ended is lost either way.
func readJITCPU(pid int) (time.Duration, error) { return readJITCPUIn("/proc", pid) }

// readJITCPUIn is readJITCPU with the proc file system at root.
func readJITCPUIn(root string, pid int) (time.Duration, error) {
	dir := fmt.Sprintf("%s/%d/task", root, pid)
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("listing threads of pid %d: %w", pid, err)
	}
	var sum time.Duration
	for _, t := range tasks {
		b, err := os.ReadFile(dir + "/" + t.Name() + "/stat")
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("reading thread %s of pid %d: %w", t.Name(), pid, err)
		}
		text := string(b)
		open, end := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
		if open < 0 || end < open || !jitThread(text[open+1:end]) {
			continue
		}
		cpu, err := parseStatCPU(text)
		if err != nil {
			return 0, fmt.Errorf("thread %s of pid %d: %w", t.Name(), pid, err)
		}
		sum += cpu
	}
	return sum, nil
}
