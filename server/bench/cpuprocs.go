package bench

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"

	"seatflow/core/delay/rocketmq"
)

// Labels of the processes in the CPU ledger.
const (
	procServer  = "server"
	procBench   = "bench"
	procMariaDB = "mariadb"
	procRedis   = "redis"
	procNameSrv = "rocketmq-namesrv"
	procBroker  = "rocketmq-broker"
)

// ledgerProc is a process whose CPU time the ledger follows.
type ledgerProc struct {
	Label string
	Addr  string // stores: the address it was found listening on
	PID   int    // 0: not found, Why says why
	Why   string
}

// tcpListen is the kernel's TCP_LISTEN state as /proc/net/tcp prints it.
const tcpListen = 0x0A

// tcpSocket is one row of /proc/net/tcp or /proc/net/tcp6.
type tcpSocket struct {
	Local netip.AddrPort
	State uint8
	Inode uint64
}

// parseProcNetTCP reads the rows of /proc/net/tcp or /proc/net/tcp6
// ("sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout
// inode …"), skipping the header.
func parseProcNetTCP(text string) ([]tcpSocket, error) {
	var out []tcpSocket
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "sl" {
			continue
		}
		if len(f) < 10 {
			return nil, fmt.Errorf("proc net tcp: %d fields in %q, want at least 10", len(f), strings.TrimSpace(line))
		}
		local, err := parseHexAddrPort(f[1])
		if err != nil {
			return nil, fmt.Errorf("proc net tcp: local address: %w", err)
		}
		state, err := strconv.ParseUint(f[3], 16, 8)
		if err != nil {
			return nil, fmt.Errorf("proc net tcp: state %q: %w", f[3], err)
		}
		inode, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("proc net tcp: inode %q: %w", f[9], err)
		}
		out = append(out, tcpSocket{Local: local, State: uint8(state), Inode: inode})
	}
	return out, nil
}

// parseHexAddrPort reads "0100007F:0CEA": the address as 32-bit words, each
// printed in the host's byte order (one word for IPv4, four for IPv6), and
// the port in hex. IPv4-mapped IPv6 addresses come back as IPv4.
func parseHexAddrPort(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%q: want ADDR:PORT in hex", s)
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("%q: port: %w", s, err)
	}
	words, err := hex.DecodeString(hexAddr)
	if err != nil || (len(words) != 4 && len(words) != 16) {
		return netip.AddrPort{}, fmt.Errorf("%q: want 8 or 32 hex digits of address", s)
	}
	b := make([]byte, len(words))
	for i := 0; i < len(words); i += 4 {
		binary.NativeEndian.PutUint32(b[i:], binary.BigEndian.Uint32(words[i:]))
	}
	addr, _ := netip.AddrFromSlice(b)
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

// listensOn tells whether s is a listening socket that a client dialling
// host:port reaches: that port, on that address or on every address
// (host "localhost": any loopback address).
func (s tcpSocket) listensOn(host string, port uint16) bool {
	if s.State != tcpListen || s.Local.Port() != port {
		return false
	}
	local := s.Local.Addr()
	if local.IsUnspecified() {
		return true
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host == "localhost" && local.IsLoopback()
	}
	return ip.Unmap() == local
}

// listenerPID finds the process listening on addr (host:port): the inode
// of the listening socket in /proc/net/tcp{,6}, then the process holding a
// descriptor of that socket. A socket shared by several processes (a
// pre-forking server) yields the first found.
func listenerPID(addr string) (int, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, fmt.Errorf("address %q: %w", addr, err)
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("address %q: port: %w", addr, err)
	}
	inodes := map[uint64]bool{}
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if errors.Is(err, fs.ErrNotExist) && table == "/proc/net/tcp6" {
			continue // a kernel without IPv6
		}
		if err != nil {
			return 0, fmt.Errorf("reading %s: %w", table, err)
		}
		socks, err := parseProcNetTCP(string(b))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", table, err)
		}
		for _, s := range socks {
			if s.listensOn(host, uint16(port)) {
				inodes[s.Inode] = true
			}
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("no socket listens on %s", addr)
	}
	pid, err := socketOwner(inodes)
	if err != nil {
		return 0, fmt.Errorf("the socket listening on %s: %w", addr, err)
	}
	return pid, nil
}

// socketOwner returns the first process with a descriptor linking to
// socket:[inode] for one of inodes.
func socketOwner(inodes map[uint64]bool) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, fmt.Errorf("listing /proc: %w", err)
	}
	denied := 0
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue // not a process
		}
		dir := "/proc/" + e.Name() + "/fd"
		fds, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrPermission) {
			denied++
		}
		if err != nil {
			continue // exited meanwhile, or another user's
		}
		for _, fd := range fds {
			link, err := os.Readlink(dir + "/" + fd.Name())
			if err != nil {
				continue // closed meanwhile
			}
			if inode, ok := socketInode(link); ok && inodes[inode] {
				return pid, nil
			}
		}
	}
	if denied > 0 {
		return 0, fmt.Errorf("no process found holding it (the descriptors of %d processes were not readable: another user's, run as root to see them)", denied)
	}
	return 0, errors.New("no process found holding it")
}

// socketInode reads the inode of a descriptor's link "socket:[12345]".
func socketInode(link string) (uint64, bool) {
	rest, ok := strings.CutPrefix(link, "socket:[")
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutSuffix(rest, "]")
	if !ok {
		return 0, false
	}
	inode, err := strconv.ParseUint(rest, 10, 64)
	return inode, err == nil
}

// storeProcesses finds the real stack's store processes by the ports they
// listen on: MariaDB, Redis and the name servers at the addresses the bench
// was given (never the --rtt proxies, which run inside the bench), the
// brokers at the addresses the name servers list. A store not found is
// kept with the reason, so the report shows it absent.
func storeProcesses(ctx context.Context, o Options) []ledgerProc {
	var want []ledgerProc
	add := func(label, addr string, err error) {
		p := ledgerProc{Label: label, Addr: addr}
		if err != nil {
			p.Why = err.Error()
		}
		want = append(want, p)
	}
	if cfg, err := mysql.ParseDSN(strings.TrimPrefix(o.MySQL, "mysql://")); err != nil {
		add(procMariaDB, "", fmt.Errorf("--mysql: %w", err))
	} else {
		add(procMariaDB, cfg.Addr, nil)
	}
	if u, err := url.Parse(o.Redis); err != nil {
		add(procRedis, "", fmt.Errorf("--redis: %w", err))
	} else {
		add(procRedis, u.Host, nil)
	}
	mq, err := rocketmq.ParseURL(o.RocketMQ)
	if err != nil {
		add(procNameSrv, "", fmt.Errorf("--rocketmq: %w", err))
		add(procBroker, "", fmt.Errorf("--rocketmq: %w", err))
	} else {
		for _, ns := range mq.NameServers {
			add(procNameSrv, ns, nil)
		}
		brokers, err := rocketmq.BrokerAddrs(ctx, mq.NameServers)
		if err == nil && len(brokers) == 0 {
			err = errors.New("the name servers list no broker")
		}
		if err != nil {
			add(procBroker, "", err)
		}
		for _, b := range brokers {
			var err error
			if !onThisMachine(b) {
				err = fmt.Errorf("%s is not an address of this machine", b)
			}
			add(procBroker, b, err)
		}
	}
	var out []ledgerProc
	seen := map[int]bool{}
	for _, p := range want {
		if p.Why == "" {
			pid, err := listenerPID(p.Addr)
			switch {
			case err != nil:
				p.Why = err.Error()
			case seen[pid]:
				continue // the same process under another address: count it once
			default:
				p.PID, seen[pid] = pid, true
			}
		}
		out = append(out, p)
	}
	return out
}

// onThisMachine tells whether host:port names this machine: a loopback
// address or one of its interfaces' (a broker registers under the address
// it is configured with, by default its first interface's). Elsewhere, a
// local process listening on every address on the same port would be
// mistaken for it.
func onThisMachine(hostport string) bool {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return false
	}
	if ap.Addr().IsLoopback() {
		return true
	}
	ifAddrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range ifAddrs {
		if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Unmap() == ap.Addr().Unmap() {
			return true
		}
	}
	return false
}

// describeProcs names the processes found and those not, for the progress log.
func describeProcs(procs []ledgerProc) string {
	var parts []string
	for _, p := range procs {
		name := strings.TrimSpace(p.Label + " " + p.Addr)
		if p.PID == 0 {
			parts = append(parts, fmt.Sprintf("%s not found (%s)", name, p.Why))
		} else {
			parts = append(parts, fmt.Sprintf("%s pid %d", name, p.PID))
		}
	}
	return strings.Join(parts, ", ")
}
