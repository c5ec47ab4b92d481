package bench

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The CPU ledger says where the machine's CPU went during one phase, per
// operation: the server child, the bench itself (with --rtt, its proxies
// too), each store process, and the rest of the machine. On 2 shared cores
// the rates are CPU-bound, so this is the profile that explains them.

// errNotFound marks a process the ledger looked for and did not find.
var errNotFound = errors.New("not found")

// cpuReading is one CPU time read from /proc, or why it could not be.
type cpuReading struct {
	cpu time.Duration
	jit time.Duration // of cpu, a JVM's compiler threads' (jit.go)
	err error
}

// cpuSample is one reading of every followed process and of the machine.
type cpuSample struct {
	at      time.Time
	procs   []cpuReading // in the ledger's order
	machine cpuReading   // busy time of all CPUs
	cpus    int          // CPUs listed in /proc/stat
}

// cpuLedger follows a set of processes and the machine from its start.
type cpuLedger struct {
	procs []ledgerProc
	start cpuSample
}

// startCPULedger takes the phase's first sample.
func startCPULedger(procs []ledgerProc) *cpuLedger {
	l := &cpuLedger{procs: procs}
	l.start = l.sample()
	return l
}

// stop takes the last sample and accounts for the ops the phase did.
func (l *cpuLedger) stop(ops int64) cpuUsage {
	return account(l.procs, l.start, l.sample(), ops)
}

func (l *cpuLedger) sample() cpuSample {
	s := cpuSample{at: time.Now()}
	s.machine.cpu, s.cpus, s.machine.err = readMachineCPU()
	for _, p := range l.procs {
		var r cpuReading
		if p.PID == 0 {
			r.err = fmt.Errorf("%w: %s", errNotFound, p.Why)
		} else {
			r.cpu, r.err = readProcCPU(p.PID)
			if r.err == nil {
				r.jit, r.err = readJITCPU(p.PID)
			}
		}
		s.procs = append(s.procs, r)
	}
	return s
}

// readMachineCPU reads the busy time of all CPUs and their count from /proc/stat.
func readMachineCPU() (time.Duration, int, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0, fmt.Errorf("reading the machine's CPU time: %w", err)
	}
	return parseProcStat(string(b))
}

// parseProcStat reads the busy time of all CPUs from the "cpu " line of
// /proc/stat (user nice system idle iowait irq softirq steal guest
// guest_nice, in USER_HZ ticks) and counts the "cpuN" lines. Busy is every
// field but idle and iowait, less guest and guest_nice, which the kernel
// already counts in user and nice. Steal (the hypervisor running another
// guest) counts as busy: those cycles were not this machine's to use.
func parseProcStat(text string) (busy time.Duration, cpus int, err error) {
	found := false
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if n, ok := strings.CutPrefix(f[0], "cpu"); ok && n != "" {
			cpus++
			continue
		}
		if f[0] != "cpu" {
			continue
		}
		if len(f) < 5 {
			return 0, 0, fmt.Errorf("proc stat: cpu line %q: want at least 4 fields", strings.TrimSpace(line))
		}
		var ticks int64
		for i, v := range f[1:min(len(f), 9)] {
			if i == 3 || i == 4 { // idle, iowait
				continue
			}
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("proc stat: cpu line field %d %q: %w", i+1, v, err)
			}
			ticks += n
		}
		busy, found = time.Duration(ticks)*time.Second/clockTicks, true
	}
	if !found {
		return 0, 0, errors.New(`proc stat: no "cpu " line`)
	}
	return busy, cpus, nil
}

// cpuShare is one line of a ledger: the CPU time spent over the phase, and
// per operation.
type cpuShare struct {
	Label   string        `json:"label"`
	Addr    string        `json:"addr,omitempty"`
	PID     int           `json:"pid,omitempty"`
	CPU     time.Duration `json:"cpu_ns"`
	PerOpUS float64       `json:"us_per_op"`
	// JIT is the part of CPU a JVM spent compiling (jit.go): warm-up, not
	// the cost of the operations.
	JIT        time.Duration `json:"jit_cpu_ns,omitempty"`
	JITPerOpUS float64       `json:"jit_us_per_op,omitempty"`
	// Missing is "not found" or "unreadable" (then CPU and PerOpUS are not
	// measurements), Err the reason.
	Missing string `json:"missing,omitempty"`
	Err     string `json:"error,omitempty"`
}

// cpuUsage is a ledger's account of one phase.
type cpuUsage struct {
	Ops       int64         `json:"ops"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	CPUs      int           `json:"cpus"`
	Processes []cpuShare    `json:"processes"` // server, bench, then the stores
	// Other is the machine less the processes measured: other engineers'
	// work, kernel threads, interrupts, and the processes missing above.
	Other       cpuShare `json:"other"`
	Machine     cpuShare `json:"machine"`                 // busy time of all CPUs (/proc/stat)
	Utilisation float64  `json:"machine_utilisation_pct"` // Machine ÷ (CPUs × Elapsed)
}

// account turns a ledger's first and last samples into its account.
func account(procs []ledgerProc, start, end cpuSample, ops int64) cpuUsage {
	u := cpuUsage{Ops: ops, Elapsed: end.at.Sub(start.at), CPUs: end.cpus}
	share := func(label string, from, to cpuReading) cpuShare {
		sh := cpuShare{Label: label}
		err := from.err
		if err == nil {
			err = to.err
		}
		switch {
		case errors.Is(err, errNotFound):
			sh.Missing, sh.Err = "not found", err.Error()
		case err != nil:
			sh.Missing, sh.Err = "unreadable", err.Error()
		default:
			sh.CPU, sh.JIT = to.cpu-from.cpu, to.jit-from.jit
			sh.PerOpUS, sh.JITPerOpUS = u.perOpUS(sh.CPU), u.perOpUS(sh.JIT)
		}
		return sh
	}
	var named time.Duration
	for i, p := range procs {
		sh := share(p.Label, start.procs[i], end.procs[i])
		sh.Addr, sh.PID = p.Addr, p.PID
		named += sh.CPU
		u.Processes = append(u.Processes, sh)
	}
	u.Machine = share("machine", start.machine, end.machine)
	u.Other = cpuShare{Label: "other"}
	if u.Machine.Missing != "" {
		u.Other.Missing, u.Other.Err = "unknown", "the machine's CPU time is missing"
		return u
	}
	u.Other.CPU = u.Machine.CPU - named
	u.Other.PerOpUS = u.perOpUS(u.Other.CPU)
	if u.CPUs > 0 && u.Elapsed > 0 {
		u.Utilisation = 100 * float64(u.Machine.CPU) / (float64(u.CPUs) * float64(u.Elapsed))
	}
	return u
}

// perOpUS is d per operation in µs (0 without operations).
func (u cpuUsage) perOpUS(d time.Duration) float64 {
	if u.Ops <= 0 {
		return 0
	}
	return float64(d) / float64(time.Microsecond) / float64(u.Ops)
}

// cpuCeiling is the highest phase÷commit rate ratio the machine's CPU
// allows: were both phases to keep every CPU busy, each would run at (CPU
// time available) ÷ (machine CPU per op), so their rates' ratio is the
// inverse of their machine CPU per op's. ok is false without the figures.
func cpuCeiling(commit, phase cpuUsage) (ceiling float64, ok bool) {
	if commit.Machine.Missing != "" || phase.Machine.Missing != "" || commit.Ops <= 0 || phase.Machine.PerOpUS <= 0 {
		return 0, false
	}
	return commit.Machine.PerOpUS / phase.Machine.PerOpUS, true
}

// ceilingRow is the CPU ceiling of a phase's ratio to the raw DB commit,
// beside the ratio measured; per names the phase's operation ("order
// placed"), rate its rate ("orders/s").
func ceilingRow(row func(metric string, v float64, unit string) Row, per string, commit, phase cpuUsage, rate string, measured float64) Row {
	ceiling, ok := cpuCeiling(commit, phase)
	r := row("CPU ceiling of the ratio (machine CPU per DB commit ÷ per "+per+")", ceiling, "×").
		beside("measured ratio ("+rate+" ÷ DB commit/s)", measured)
	if !ok {
		r = r.absent("unknown")
	}
	return r
}

// cpuRows are a ledger's rows: each process's CPU per operation, the rest
// of the machine, the machine, and how busy the machine was. per names the
// operation ("order placed"), phase the phase ("placing").
func cpuRows(row func(metric string, v float64, unit string) Row, per, phase string, u cpuUsage) []Row {
	var rows []Row
	if u.Ops > 0 {
		labels := map[string]int{}
		for _, p := range u.Processes {
			labels[p.Label]++
		}
		for _, sh := range append(slices.Clone(u.Processes), u.Other, u.Machine) {
			name := sh.Label
			if labels[sh.Label] > 1 && sh.Addr != "" { // several brokers or name servers
				name += " " + sh.Addr
			}
			rows = append(rows, row("CPU per "+per+": "+name, sh.PerOpUS, "µs").absent(sh.Missing))
			if sh.JIT > 0 {
				rows = append(rows, row("CPU per "+per+": "+name+", of it the JIT compiler", sh.JITPerOpUS, "µs"))
			}
		}
	}
	util := row("machine CPU utilisation, "+phase, u.Utilisation, "%")
	return append(rows, util.absent(u.Machine.Missing))
}

// noteCPU records why rows of a ledger are missing.
func (r *Report) noteCPU(phase string, u cpuUsage) {
	for _, sh := range append(slices.Clone(u.Processes), u.Machine) {
		if sh.Err != "" {
			r.Notes = append(r.Notes, fmt.Sprintf("%s: CPU ledger: %s: %s", phase, sh.Label, sh.Err))
		}
	}
}
