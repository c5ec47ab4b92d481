package server

import (
	"bufio"
	"bytes"
	"container/list"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"seatflow/core/store"
)

// The connection cap keeps the process below its descriptor limit
// (RLIMIT_NOFILE), so a rush of connections can never make a store fail to
// open a file or a socket: at 20,000 connections the embedded stack once
// answered 500 "unable to open database file".
//
// At the cap a new connection takes the place of the longest-idle
// keep-alive one, which is closed (as IdleTimeout would close it later).
// With none idle it is answered from a small reserve of descriptors kept
// for that: its request head is read (briefly), so the client reads an
// answer rather than a reset, and it gets 503 overloaded with Retry-After,
// unless it is for the lane (laneRoute: probes, metrics, the payment
// callback, the console), which is served on that reserve by a server of
// its own, one request per connection.
const (
	// connReserve is the descriptors kept beyond the cap for over-cap
	// answers and the lane.
	connReserve = 64
	// otherDescriptors is what the process holds besides client
	// connections and the stores' pools: RocketMQ's connections to name
	// servers and brokers, the seat relay's pub/sub, listeners, log and
	// static files, standard streams, DNS lookups.
	otherDescriptors = 128
	// minConns is the least cap worth serving with.
	minConns = 16
	// overflowHeadTimeout bounds reading an over-cap request's head and
	// writing its answer: a reserve descriptor is not held for longer.
	overflowHeadTimeout = time.Second
)

// overloadedResponse is the over-cap answer, the same body and headers as
// errOverloaded's through handleError.
var overloadedResponse = func() []byte {
	body := fmt.Sprintf(`{"error":{"code":%q,"message":%q}}`, errOverloaded.Code, errOverloaded.Message)
	return fmt.Appendf(nil, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"+
		"Retry-After: %d\r\nCache-Control: no-store\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		int(overloadRetryAfter/time.Second), len(body), body)
}()

// connLimit counts the open connections of one http.Server (its
// ConnState is track) and caps them at max.
type connLimit struct {
	max   int
	shed  prometheus.Counter
	spare chan struct{} // one token per reserve descriptor in use
	lane  chan net.Conn // over-cap lane requests, for laneListener
	done  chan struct{} // closed when the lane stops taking connections
	// reserveFull is called when an over-cap connection has to wait for a
	// reserve descriptor (tests step in there).
	reserveFull func()
	stop        sync.Once

	mu    sync.Mutex
	conns map[net.Conn]*list.Element // every open connection; its place in idle, nil while not idle
	idle  *list.List                 // idle keep-alive connections, longest idle first
}

func newConnLimit(max int, shed prometheus.Counter, reg prometheus.Registerer) *connLimit {
	l := &connLimit{max: max, shed: shed, spare: make(chan struct{}, connReserve), lane: make(chan net.Conn),
		done: make(chan struct{}), conns: map[net.Conn]*list.Element{}, idle: list.New(), reserveFull: func() {}}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatflow_open_connections",
			Help: "Open client connections, under the cap."},
			func() float64 { l.mu.Lock(); defer l.mu.Unlock(); return float64(len(l.conns)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "seatflow_connections_limit",
			Help: "The cap on open client connections (SEATFLOW_MAX_CONNS, or derived from RLIMIT_NOFILE)."},
			func() float64 { return float64(max) }))
	return l
}

// connCap is the cap on client connections: setting when given
// (SEATFLOW_MAX_CONNS), else what the descriptor limit leaves once the
// stores' pools, the other descriptors and the reserve are set aside.
func connCap(setting int, nofile uint64, stores int) (int, error) {
	room := int(min(nofile, 1<<30)) - stores - otherDescriptors - connReserve
	switch {
	case setting > room:
		return 0, fmt.Errorf("SEATFLOW_MAX_CONNS=%d: the descriptor limit (ulimit -n %d) leaves room for %d connections beside the stores; lower it or raise the limit",
			setting, nofile, max(room, 0))
	case setting > 0:
		return setting, nil
	case room < minConns:
		return 0, fmt.Errorf("SEATFLOW_MAX_CONNS: the descriptor limit (ulimit -n %d) leaves room for %d connections beside the stores, want at least %d: raise the limit",
			nofile, max(room, 0), minConns)
	}
	return room, nil
}

// storeDescriptors is what the stores' pools may hold open: per database
// connection three (SQLite keeps the file, its WAL and its shared memory
// open; MySQL one socket, over-counted), the writer included; per Redis
// node its pool.
func storeDescriptors(db *store.DB, rc redis.UniversalClient) int {
	n := (db.PoolSize() + 1) * 3
	switch c := rc.(type) {
	case *redis.Client:
		n += c.Options().PoolSize
	case *redis.ClusterClient:
		n += c.Options().PoolSize * max(1, len(c.Options().Addrs))
	}
	return n
}

// descriptorLimit is this process's RLIMIT_NOFILE (the soft limit, which
// Go raises to the hard one at start).
func descriptorLimit() (uint64, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return 0, fmt.Errorf("SEATFLOW_MAX_CONNS: read RLIMIT_NOFILE: %w", err)
	}
	return r.Cur, nil
}

// track is the http.Server's ConnState: which connections are open and
// which idle.
func (l *connLimit) track(c net.Conn, s http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, open := l.conns[c]
	if !open { // evicted already
		return
	}
	if e != nil {
		l.idle.Remove(e)
		l.conns[c] = nil
	}
	switch s {
	case http.StateIdle:
		l.conns[c] = l.idle.PushBack(c)
	case http.StateClosed, http.StateHijacked:
		delete(l.conns, c)
	}
}

// admit counts c in if there is room, making room by closing the
// longest-idle connection if need be; false when every open one is busy.
func (l *connLimit) admit(c net.Conn) bool {
	l.mu.Lock()
	var victim net.Conn
	if len(l.conns) >= l.max {
		front := l.idle.Front()
		if front == nil {
			l.mu.Unlock()
			return false
		}
		victim = l.idle.Remove(front).(net.Conn)
		delete(l.conns, victim)
	}
	l.conns[c] = nil
	l.mu.Unlock()
	if victim != nil {
		_ = victim.Close()
	}
	return true
}

// listener caps ln's connections.
func (l *connLimit) listener(ln net.Listener) net.Listener { return &cappedListener{ln, l} }

type cappedListener struct {
	net.Listener
	l *connLimit
}

func (cl *cappedListener) Accept() (net.Conn, error) {
	for {
		c, err := cl.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if cl.l.admit(c) {
			return c, nil
		}
		cl.l.overflow(c)
	}
}

// overflow answers a connection over the cap on a reserve descriptor. With
// the reserve in use it waits for one, and the connections behind it wait
// in the listen queue: an answer takes milliseconds, and closing them
// unanswered instead left thousands of buyers in a burst with no answer
// at all (bench rush --server-nofile).
func (l *connLimit) overflow(c net.Conn) {
	select {
	case l.spare <- struct{}{}:
	default:
		l.reserveFull()
		select {
		case l.spare <- struct{}{}:
		case <-l.done:
			_ = c.Close()
			return
		}
	}
	go l.answer(c)
}

// answer reads the request head and hands a lane request to the lane, or
// writes 503 overloaded and closes.
func (l *connLimit) answer(c net.Conn) {
	release := func() { <-l.spare }
	_ = c.SetDeadline(time.Now().Add(overflowHeadTimeout))
	var seen bytes.Buffer
	req, err := http.ReadRequest(bufio.NewReader(io.TeeReader(c, &seen)))
	if err == nil && laneRoute(req.URL.Path) {
		_ = c.SetDeadline(time.Time{})
		rc := &replayConn{Conn: c, r: io.MultiReader(&seen, c), release: release}
		select {
		case l.lane <- rc:
		case <-l.done:
			_ = rc.Close()
		}
		return
	}
	defer release()
	defer c.Close()
	if err != nil { // no request to answer: a slow or broken client
		return
	}
	l.shed.Inc()
	if _, err := c.Write(overloadedResponse); err != nil {
		return
	}
	// Close the writing side first and drain what the client still sends
	// (a body): closing with unread data would reset the connection and
	// could lose the answer before the client reads it.
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

// replayConn is a lane connection whose request head was read already:
// reads give those bytes again first. Closing it returns its reserve
// descriptor.
type replayConn struct {
	net.Conn
	r       io.Reader
	release func()
	once    sync.Once
}

func (rc *replayConn) Read(p []byte) (int, error) { return rc.r.Read(p) }

func (rc *replayConn) Close() error {
	err := rc.Conn.Close()
	rc.once.Do(rc.release)
	return err
}

// laneListener is where the lane's server accepts the over-cap lane
// connections; Close stops it.
func (l *connLimit) laneListener(addr net.Addr) net.Listener { return &laneListener{l, addr} }

type laneListener struct {
	l    *connLimit
	addr net.Addr
}

func (ll *laneListener) Accept() (net.Conn, error) {
	select {
	case c := <-ll.l.lane:
		return c, nil
	case <-ll.l.done:
		return nil, net.ErrClosed
	}
}

func (ll *laneListener) Close() error {
	ll.l.stopLane()
	return nil
}

// stopLane ends the hand-over of connections to the lane.
func (l *connLimit) stopLane() { l.stop.Do(func() { close(l.done) }) }

// Close closes the API's listener and ends the hand-over to the lane too:
// http.Server.Shutdown waits for Accept to return, and an Accept waiting
// for the lane's reserve would otherwise wait until the lane's own
// listener closed, which serveOn does after.
func (cl *cappedListener) Close() error {
	cl.l.stopLane()
	return cl.Listener.Close()
}

func (ll *laneListener) Addr() net.Addr { return ll.addr }
