package bench

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// procNetstat is where Linux keeps the TcpExt counters.
const procNetstat = "/proc/net/netstat"

// listenOverflows reads the kernel's count of connections refused because
// a listen queue was full (TcpExt ListenOverflows, machine-wide). A burst
// of new connections past net.core.somaxconn waits for the client's SYN
// retry (1 s, then 3 s): a delay in every latency the rush reports that is
// the machine's setting, not the server's work, so the report names it.
func listenOverflows(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var names []string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "TcpExt:" {
			continue
		}
		if names == nil { // the first TcpExt line names, the second counts
			names = fields
			continue
		}
		for i, name := range names {
			if name == "ListenOverflows" && i < len(fields) {
				return strconv.ParseInt(fields[i], 10, 64)
			}
		}
		break
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no TcpExt ListenOverflows", path)
}
