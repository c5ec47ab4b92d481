package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	"seatflow/core/testenv"
)

// The /proc/net/tcp fixtures below were printed by a little-endian kernel.
func needLittleEndian(t *testing.T) {
	t.Helper()
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("fixtures are a little-endian kernel's /proc/net/tcp")
	}
}

func needLinux(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
}

const procNetTCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:0CEA 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 8109 1 00000000a7cbb82d 100 0 0 10 0
   1: 0100007F:C350 0100007F:0CEA 01 00000000:00000000 00:00000000 00000000     0        0 9001 1 0000000000000000 20 4 30 10 -1
   2: 00000000:18EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 8148 1 00000000671b132d 100 0 0 10 0
   3: 0100007F:2A9F 0100007F:D431 06 00000000:00000000 03:00000C4B 00000000     0        0 0 3 0000000000000000
`

const procNetTCP6 = `  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 00000000000000000000000001000000:2694 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9521 1 0000000000000000 100 0 0 10 0
   1: 0000000000000000FFFF00000100007F:2A9F 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9834 1 0000000000000000 100 0 0 10 0
   2: 00000000000000000000000000000000:2AA0 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 9833 1 0000000000000000 100 0 0 10 0
   3: 00000000000000000000000001000000:E2C4 00000000000000000000000001000000:2694 01 00000000:00000000 00:00000000 00000000     0        0 9999 1 0000000000000000 20 4 30 10 -1
`

func TestParseProcNetTCP(t *testing.T) {
	needLittleEndian(t)
	ap := netip.MustParseAddrPort
	tests := []struct {
		name    string
		text    string
		want    []tcpSocket
		wantErr bool
	}{
		{name: "IPv4: LISTEN, ESTABLISHED and a TIME_WAIT without inode", text: procNetTCP, want: []tcpSocket{
			{Local: ap("127.0.0.1:3306"), State: tcpListen, Inode: 8109},
			{Local: ap("127.0.0.1:50000"), State: 0x01, Inode: 9001},
			{Local: ap("0.0.0.0:6379"), State: tcpListen, Inode: 8148},
			{Local: ap("127.0.0.1:10911"), State: 0x06, Inode: 0},
		}},
		{name: "IPv6: ::1, an IPv4-mapped address, any address", text: procNetTCP6, want: []tcpSocket{
			{Local: ap("[::1]:9876"), State: tcpListen, Inode: 9521},
			{Local: ap("127.0.0.1:10911"), State: tcpListen, Inode: 9834},
			{Local: ap("[::]:10912"), State: tcpListen, Inode: 9833},
			{Local: ap("[::1]:58052"), State: 0x01, Inode: 9999},
		}},
		{name: "header only", text: "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"},
		{name: "truncated row", text: "   0: 0100007F:0CEA 00000000:0000 0A\n", wantErr: true},
		{name: "address of 3 bytes", text: "   0: 01007F:0CEA 00000000:0000 0A 0:0 0:0 0 0 0 1\n", wantErr: true},
		{name: "port not hex", text: "   0: 0100007F:XYZ 00000000:0000 0A 0:0 0:0 0 0 0 1\n", wantErr: true},
		{name: "inode not a number", text: "   0: 0100007F:0CEA 00000000:0000 0A 0:0 0:0 0 0 0 x\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcNetTCP(tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestListensOn(t *testing.T) {
	needLittleEndian(t)
	var socks []tcpSocket
	for _, text := range []string{procNetTCP, procNetTCP6} {
		s, err := parseProcNetTCP(text)
		if err != nil {
			t.Fatal(err)
		}
		socks = append(socks, s...)
	}
	tests := []struct {
		name string
		host string
		port uint16
		want []uint64 // inodes of the sockets a client of host:port reaches
	}{
		{"LISTEN on the address", "127.0.0.1", 3306, []uint64{8109}},
		{"established and time-wait sockets on the port are not listeners", "127.0.0.1", 50000, nil},
		{"another address on the port", "127.0.0.2", 3306, nil},
		{"any-address listener reaches every host", "127.0.0.5", 6379, []uint64{8148}},
		{"IPv6 loopback", "::1", 9876, []uint64{9521}},
		{"IPv4 client of an IPv4-mapped IPv6 listener", "127.0.0.1", 10911, []uint64{9834}},
		{"IPv6 any address", "::1", 10912, []uint64{9833}},
		{"localhost is any loopback", "localhost", 9876, []uint64{9521}},
		{"a port nobody listens on", "127.0.0.1", 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []uint64
			for _, s := range socks {
				if s.listensOn(tt.host, tt.port) {
					got = append(got, s.Inode)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("inodes %v, want %v", got, tt.want)
			}
		})
	}
}

// TestListenerPID: the process holding a socket this test listens on is the
// test itself, over IPv4 and IPv6; a closed port has no process.
func TestListenerPID(t *testing.T) {
	needLinux(t)
	listen := func(network, addr string) string {
		ln, err := net.Listen(network, addr)
		if err != nil {
			return ""
		}
		t.Cleanup(func() { ln.Close() })
		return ln.Addr().String()
	}
	closed := func() string {
		ln, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}()
	tests := []struct {
		name    string
		addr    string
		wantErr bool
	}{
		{name: "IPv4 loopback", addr: listen("tcp4", "127.0.0.1:0")},
		{name: "IPv6 loopback", addr: listen("tcp6", "[::1]:0")},
		{name: "closed port", addr: closed, wantErr: true},
		{name: "not host:port", addr: "127.0.0.1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.addr == "" {
				t.Skip("cannot listen there on this machine")
			}
			pid, err := listenerPID(tt.addr)
			if (err != nil) != tt.wantErr {
				t.Fatalf("listenerPID(%s) = %d, %v; wantErr %v", tt.addr, pid, err, tt.wantErr)
			}
			if !tt.wantErr && pid != os.Getpid() {
				t.Errorf("listenerPID(%s) = %d, want this process, %d", tt.addr, pid, os.Getpid())
			}
		})
	}
}

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name     string
		text     string
		wantBusy time.Duration
		wantCPUs int
		wantErr  bool
	}{
		{name: "every field: guest and guest_nice are already in user and nice",
			text:     "cpu  100 20 30 1000 50 5 7 3 40 2\ncpu0 50 10 15 500 25 2 3 1 20 1\ncpu1 50 10 15 500 25 3 4 2 20 1\nintr 123\nctxt 456\n",
			wantBusy: 1650 * time.Millisecond, wantCPUs: 2},
		{name: "an old kernel's four fields", text: "cpu 1 2 3 4\ncpu0 1 2 3 4\n", wantBusy: 60 * time.Millisecond, wantCPUs: 1},
		{name: "no cpu line", text: "cpu0 1 2 3 4\nintr 1\n", wantErr: true},
		{name: "too few fields", text: "cpu 1 2 3\n", wantErr: true},
		{name: "not a number", text: "cpu 1 x 3 4 5\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			busy, cpus, err := parseProcStat(tt.text)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if busy != tt.wantBusy || cpus != tt.wantCPUs {
				t.Errorf("busy %v over %d CPUs, want %v over %d", busy, cpus, tt.wantBusy, tt.wantCPUs)
			}
		})
	}
}

func TestAccount(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC)
	procs := []ledgerProc{
		{Label: procServer, PID: 10},
		{Label: procBench, PID: 11},
		{Label: procMariaDB, Addr: "127.0.0.1:3306", PID: 12},
		{Label: procBroker, Why: "no socket listens on 127.0.0.1:10911"},
	}
	read := func(d time.Duration) cpuReading { return cpuReading{cpu: d} }
	notFound := cpuReading{err: fmt.Errorf("%w: no socket listens on 127.0.0.1:10911", errNotFound)}
	start := cpuSample{at: t0, cpus: 2, machine: read(100 * time.Second),
		procs: []cpuReading{read(5 * time.Second), read(time.Second), read(20 * time.Second), notFound}}
	// 2 s on 2 CPUs, 3 s busy: 1.2 s server, 0.5 s bench, 0.9 s mariadb, 0.4 s the rest.
	end := cpuSample{at: t0.Add(2 * time.Second), cpus: 2, machine: read(103 * time.Second),
		procs: []cpuReading{read(6200 * time.Millisecond), read(1500 * time.Millisecond), read(20900 * time.Millisecond), notFound}}
	unreadable := end
	unreadable.machine = cpuReading{err: errors.New("reading the machine's CPU time: permission denied")}
	unreadable.procs = slices.Clone(end.procs)
	unreadable.procs[2] = cpuReading{err: errors.New("reading CPU time of pid 12: no such process")}

	type line struct {
		perOpUS float64
		missing string
	}
	tests := []struct {
		name      string
		end       cpuSample
		ops       int64
		wantProcs []line // server, bench, mariadb, broker
		wantOther line
		wantMach  line
		wantUtil  float64
	}{
		{name: "1000 ops", end: end, ops: 1000,
			wantProcs: []line{{1200, ""}, {500, ""}, {900, ""}, {0, "not found"}},
			wantOther: line{400, ""}, wantMach: line{3000, ""}, wantUtil: 75},
		{name: "no ops: CPU time but nothing per op", end: end, ops: 0,
			wantProcs: []line{{0, ""}, {0, ""}, {0, ""}, {0, "not found"}},
			wantOther: line{0, ""}, wantMach: line{0, ""}, wantUtil: 75},
		{name: "machine and a store unreadable at the end", end: unreadable, ops: 1000,
			wantProcs: []line{{1200, ""}, {500, ""}, {0, "unreadable"}, {0, "not found"}},
			wantOther: line{0, "unknown"}, wantMach: line{0, "unreadable"}, wantUtil: 0},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := account(procs, start, tt.end, tt.ops)
			if len(u.Processes) != len(tt.wantProcs) {
				t.Fatalf("%d processes, want %d", len(u.Processes), len(tt.wantProcs))
			}
			check := func(sh cpuShare, want line) {
				if !near(sh.PerOpUS, want.perOpUS) || sh.Missing != want.missing || (sh.Missing != "") != (sh.Err != "") {
					t.Errorf("%s: %.3f µs/op, missing %q (%s); want %.3f µs/op, missing %q", sh.Label, sh.PerOpUS, sh.Missing, sh.Err, want.perOpUS, want.missing)
				}
			}
			for i, sh := range u.Processes {
				check(sh, tt.wantProcs[i])
			}
			check(u.Other, tt.wantOther)
			check(u.Machine, tt.wantMach)
			if !near(u.Utilisation, tt.wantUtil) || u.Elapsed != 2*time.Second || u.CPUs != 2 {
				t.Errorf("utilisation %.3f %% over %v on %d CPUs, want %.3f %% over 2s on 2", u.Utilisation, u.Elapsed, u.CPUs, tt.wantUtil)
			}
		})
	}
}

func TestCPUCeiling(t *testing.T) {
	usage := func(ops int64, machinePerOp float64, missing string) cpuUsage {
		return cpuUsage{Ops: ops, Machine: cpuShare{PerOpUS: machinePerOp, Missing: missing}}
	}
	tests := []struct {
		name          string
		commit, phase cpuUsage
		want          float64
		wantOK        bool
	}{
		// A commit costs the machine 500 µs, an order 2000 µs: with the CPU
		// saturated both times, orders run at most at a quarter of the commits' rate.
		{"order costs 4 commits", usage(6000, 500, ""), usage(2500, 2000, ""), 0.25, true},
		{"order cheaper than a commit", usage(6000, 900, ""), usage(2500, 600, ""), 1.5, true},
		{"commit machine CPU unreadable", usage(6000, 0, "unreadable"), usage(2500, 2000, ""), 0, false},
		{"phase machine CPU unreadable", usage(6000, 500, ""), usage(2500, 0, "unreadable"), 0, false},
		{"no commits", usage(0, 0, ""), usage(2500, 2000, ""), 0, false},
		{"no orders", usage(6000, 500, ""), usage(0, 0, ""), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := cpuCeiling(tt.commit, tt.phase)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("cpuCeiling = %v, %v; want %v, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

// TestCPURows: one row per process, then other and machine, then the
// utilisation; a missing process is a row marked absent, and two processes
// of one kind are told apart by address.
func TestCPURows(t *testing.T) {
	row := func(metric string, v float64, unit string) Row { return Row{Metric: metric, Value: v, Unit: unit} }
	u := cpuUsage{Ops: 10, Utilisation: 80,
		Processes: []cpuShare{{Label: procServer, PerOpUS: 100}, {Label: procBroker, Addr: "127.0.0.1:10911", PerOpUS: 5},
			{Label: procBroker, Addr: "127.0.0.1:20911", Missing: "not found"}},
		Other: cpuShare{Label: "other", PerOpUS: 20}, Machine: cpuShare{Label: "machine", PerOpUS: 125}}
	wantMetrics := []string{"CPU per order placed: server", "CPU per order placed: rocketmq-broker 127.0.0.1:10911",
		"CPU per order placed: rocketmq-broker 127.0.0.1:20911", "CPU per order placed: other", "CPU per order placed: machine",
		"machine CPU utilisation, placing"}
	rows := cpuRows(row, "order placed", "placing", u)
	if len(rows) != len(wantMetrics) {
		t.Fatalf("%d rows %+v, want %d", len(rows), rows, len(wantMetrics))
	}
	for i, r := range rows {
		if r.Metric != wantMetrics[i] {
			t.Errorf("row %d is %q, want %q", i, r.Metric, wantMetrics[i])
		}
	}
	if rows[2].Absent != "not found" || rows[1].Absent != "" || rows[1].Value != 5 || rows[5].Value != 80 {
		t.Errorf("rows %+v", rows)
	}
}

// TestStoreProcessesOnTheRealStack finds every store of the real stack, and
// each in a process of its own.
func TestStoreProcessesOnTheRealStack(t *testing.T) {
	needLinux(t)
	o := Options{MySQL: testenv.MySQL(t), Redis: testenv.Redis(t), RocketMQ: testenv.RocketMQ(t)}
	procs := storeProcesses(context.Background(), o)
	found := map[string]bool{}
	pids := map[int]string{}
	for _, p := range procs {
		if p.PID == 0 {
			t.Errorf("%s %s not found: %s", p.Label, p.Addr, p.Why)
			continue
		}
		if other, ok := pids[p.PID]; ok {
			t.Errorf("%s and %s are both pid %d", p.Label, other, p.PID)
		}
		pids[p.PID], found[p.Label] = p.Label, true
	}
	for _, l := range []string{procMariaDB, procRedis, procNameSrv, procBroker} {
		if !found[l] {
			t.Errorf("no %s in %s", l, describeProcs(procs))
		}
	}
}
