package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/redis/go-redis/v9"

	"seatflow/core/delay/rocketmq"
	"seatflow/core/seats"
	"seatflow/server/bench/netdelay"
)

// delayedStores is one run's --rtt: a netdelay proxy in front of each
// store, through which both the server under test and the bench's raw
// limits connect, so scenario and limit cross the same round-trip time.
type delayedStores struct {
	oneWay time.Duration

	mu      sync.Mutex
	proxies []*netdelay.Proxy
	brokers map[string]string // RocketMQ broker address → its proxy's address
}

func newDelayedStores(rtt time.Duration) *delayedStores {
	return &delayedStores{oneWay: rtt / 2, brokers: map[string]string{}}
}

func (d *delayedStores) listen(target string, opt netdelay.Options) (string, error) {
	p, err := netdelay.Listen(target, d.oneWay, opt)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	d.proxies = append(d.proxies, p)
	d.mu.Unlock()
	return p.Addr(), nil
}

// mysqlDSN is dsn (mysql://…) with its address replaced by a proxy's.
func (d *delayedStores) mysqlDSN(dsn string) (string, error) {
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(dsn, "mysql://"))
	if err != nil {
		return "", fmt.Errorf("--mysql: %w", err)
	}
	if cfg.Addr, err = d.listen(cfg.Addr, netdelay.Options{}); err != nil {
		return "", err
	}
	return "mysql://" + cfg.FormatDSN(), nil
}

// redisURL is u (redis://…) with its host replaced by a proxy's.
func (d *delayedStores) redisURL(u string) (string, error) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", fmt.Errorf("--redis: %w", err)
	}
	if pu.Host, err = d.listen(pu.Host, netdelay.Options{}); err != nil {
		return "", err
	}
	return pu.String(), nil
}

// rocketmqURL is u with every name server replaced by a proxy that also
// rewrites the broker addresses in the name server's replies to proxies of
// those brokers: a RocketMQ client learns where brokers are from the name
// server only, so its sends then cross the delay too.
func (d *delayedStores) rocketmqURL(u string) (string, error) {
	cfg, err := rocketmq.ParseURL(u)
	if err != nil {
		return "", fmt.Errorf("--rocketmq: %w", err)
	}
	var ns []string
	for _, addr := range cfg.NameServers {
		p, err := d.listen(addr, netdelay.Options{Replies: d.nameServerReplies})
		if err != nil {
			return "", err
		}
		ns = append(ns, p)
	}
	creds := ""
	if cfg.Credentials.AccessKey != "" {
		creds = url.UserPassword(cfg.Credentials.AccessKey, cfg.Credentials.SecretKey).String() + "@"
	}
	return "rocketmq://" + creds + strings.Join(ns, ","), nil
}

// brokerProxy returns the proxy address of broker addr, starting the proxy
// the first time the broker is named.
func (d *delayedStores) brokerProxy(addr string) (string, error) {
	d.mu.Lock()
	p, ok := d.brokers[addr]
	d.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := d.listen(addr, netdelay.Options{})
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if q, ok := d.brokers[addr]; ok { // another reply named it meanwhile
		return q, nil
	}
	d.brokers[addr] = p
	return p, nil
}

// maxFrame bounds a RocketMQ remoting frame read from a name server (route
// and cluster replies are a few KiB).
const maxFrame = 16 << 20

// hostPort finds IPv4 host:port strings, as brokers appear in the name
// server's JSON ("brokerAddrs":{0:"127.0.0.1:10911"}).
var hostPort = regexp.MustCompile(`\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}:\d{1,5}`)

// nameServerReplies reads one RocketMQ remoting frame (int32 length, int32
// serialisation type and header length, header, body) and replaces every
// loopback broker address in its body by that broker's proxy. The header
// (code, opaque, remark) is left as it is.
func (d *delayedStores) nameServerReplies(r io.Reader) ([]byte, error) {
	head, body, err := readFrame(r)
	if err != nil {
		return nil, err
	}
	var rerr error
	body = hostPort.ReplaceAllFunc(body, func(addr []byte) []byte {
		host, _, _ := net.SplitHostPort(string(addr))
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			return addr // the bench only ever carries loopback traffic
		}
		p, err := d.brokerProxy(string(addr))
		if err != nil {
			rerr = errors.Join(rerr, err)
			return addr
		}
		return []byte(p)
	})
	if rerr != nil {
		return nil, rerr
	}
	out := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(head)+len(body)), uint32(len(head)+len(body)))
	return append(append(out, head...), body...), nil
}

// readFrame reads one RocketMQ remoting frame: head is the int32 of
// serialisation type and header length followed by the header, body the rest.
func readFrame(r io.Reader) (head, body []byte, err error) {
	var size [4]byte
	if _, err := io.ReadFull(r, size[:]); err != nil {
		return nil, nil, err
	}
	n := binary.BigEndian.Uint32(size[:])
	if n < 4 || n > maxFrame {
		return nil, nil, fmt.Errorf("rocketmq frame of %d bytes", n)
	}
	frame := make([]byte, n)
	if _, err := io.ReadFull(r, frame); err != nil {
		return nil, nil, err
	}
	headerLen := int(binary.BigEndian.Uint32(frame[:4]) & 0xFFFFFF)
	if 4+headerLen > len(frame) {
		return nil, nil, fmt.Errorf("rocketmq header of %d bytes in a frame of %d", headerLen, n)
	}
	return frame[:4+headerLen], frame[4+headerLen:], nil
}

func (d *delayedStores) close() error {
	d.mu.Lock()
	proxies := d.proxies
	d.proxies = nil
	d.mu.Unlock()
	var errs []error
	for _, p := range proxies {
		errs = append(errs, p.Close())
	}
	return errors.Join(errs...)
}

// pingSamples is how many sequential PINGs estimate a round trip.
const pingSamples = 300

// rttCheck is the round trip the proxies really add: Redis PING from one
// client, direct and through the proxy, one after the other (the timer
// that releases each chunk can only be late, never early).
type rttCheck struct {
	Configured time.Duration `json:"configured_ns"`
	Direct     Summary       `json:"direct_ping"`
	Proxied    Summary       `json:"proxied_ping"`
	Brokers    []string      `json:"rocketmq_brokers_proxied"` // named by the name server so far
}

// added is the measured extra round trip (median against median).
func (c rttCheck) added() time.Duration { return c.Proxied.P50 - c.Direct.P50 }

func measureRTT(ctx context.Context, o Options, s *stack) (rttCheck, error) {
	c := rttCheck{Configured: o.RTT}
	s.delays.mu.Lock()
	for b := range s.delays.brokers {
		c.Brokers = append(c.Brokers, b)
	}
	s.delays.mu.Unlock()
	slices.Sort(c.Brokers)
	direct, err := seats.Dial(ctx, o.Redis)
	if err != nil {
		return c, fmt.Errorf("redis: %w", err)
	}
	defer direct.Close()
	ping := func(rdb redis.UniversalClient) (Summary, error) {
		var samples []time.Duration
		for range pingSamples {
			t := time.Now()
			if err := rdb.Ping(ctx).Err(); err != nil {
				return Summary{}, err
			}
			samples = append(samples, time.Since(t))
		}
		return summarize(samples), nil
	}
	if c.Direct, err = ping(direct); err != nil {
		return c, fmt.Errorf("direct PING: %w", err)
	}
	if c.Proxied, err = ping(s.rdb); err != nil {
		return c, fmt.Errorf("PING through the proxy: %w", err)
	}
	return c, nil
}

func rttRows(stack string, c rttCheck) []Row {
	row := func(metric string, v time.Duration) Row {
		// µs: a loopback PING takes tens of them.
		return Row{Scenario: ScenarioLimits, Stack: stack, Metric: metric, Value: float64(v) / float64(time.Microsecond), Unit: "µs"}
	}
	added := row("round trip added by the proxy (PING p50 proxied − direct)", c.added())
	if c.Configured > 0 {
		added = added.vs("--rtt", float64(c.Configured)/float64(time.Microsecond))
	}
	return []Row{
		row("Redis PING p50, direct", c.Direct.P50),
		row("Redis PING p50, through the proxy", c.Proxied.P50),
		added,
	}
}
