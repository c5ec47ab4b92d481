// Package netdelay is a loopback TCP proxy that adds a fixed one-way delay
// to both directions of every connection it carries. It stands in for
// `tc qdisc … netem delay`, which needs the sch_netem kernel module: the
// bench uses it to put a round-trip time between the server under test and
// its stores.
//
// Each direction of a connection is a pipeline: a reader stamps every chunk
// it reads with "now + delay" and queues it; a writer releases the chunks in
// order when their time comes. Reading goes on while earlier chunks wait, so
// the delay adds latency without capping throughput, and connections never
// wait for one another.
package netdelay

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// ReadFunc reads the next chunk of a stream. It may rewrite what it read
// (see Options.Replies); it returns io.EOF when the stream ended.
type ReadFunc func(r io.Reader) ([]byte, error)

// Options change how a Proxy forwards.
type Options struct {
	// Replies, when set, cuts the target→client stream into chunks instead
	// of plain reads, e.g. to parse a protocol's frames and rewrite them.
	Replies ReadFunc
}

// Proxy listens on a loopback port and forwards every connection to target.
type Proxy struct {
	ln      net.Listener
	target  string
	oneWay  time.Duration
	replies ReadFunc
	clock   *clock // nil without delay

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// queued bounds the chunks in flight per direction: enough for any
// bandwidth-delay product of loopback at a few milliseconds, small enough
// that a stalled reader holds little memory.
const queued = 256

// dialTimeout bounds the dial of the target for each accepted connection.
const dialTimeout = 5 * time.Second

// Listen starts a proxy on 127.0.0.1 (a free port) to target, adding
// oneWay to each direction (a round trip gains 2 × oneWay).
func Listen(target string, oneWay time.Duration, opt Options) (*Proxy, error) {
	if oneWay < 0 {
		return nil, fmt.Errorf("netdelay: negative delay %v", oneWay)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netdelay: listen: %w", err)
	}
	p := &Proxy{ln: ln, target: target, oneWay: oneWay, replies: opt.Replies, conns: map[net.Conn]struct{}{}}
	if oneWay > 0 {
		p.clock = newClock()
	}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the host:port clients dial instead of the target.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Close stops accepting, cuts every open connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	if p.clock != nil {
		p.clock.close()
	}
	return err
}

// track registers an open connection; false once the proxy is closing.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return // closed
		}
		if !p.track(c) {
			_ = c.Close()
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

// serve carries one client connection: it dials the target, then runs
// both directions until each has ended.
func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	defer p.untrack(client)
	defer client.Close()
	// The TCP handshake to a distant target costs a round trip before any
	// byte flows; the dial on loopback costs nothing, so wait for it.
	if p.clock != nil {
		p.clock.wait(time.Now().Add(2*p.oneWay), make(chan struct{}, 1))
	}
	upstream, err := net.DialTimeout("tcp", p.target, dialTimeout)
	if err != nil {
		return // the client sees its connection closed, as after a failed connect
	}
	if !p.track(upstream) {
		_ = upstream.Close()
		return
	}
	defer p.untrack(upstream)
	defer upstream.Close()
	replies := p.replies
	if replies == nil {
		replies = plainReader()
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.pipe(upstream, client, plainReader()) }()
	go func() { defer wg.Done(); p.pipe(client, upstream, replies) }()
	wg.Wait()
}

// plainReader reads whatever the socket has, up to 32 KiB per chunk.
func plainReader() ReadFunc {
	buf := make([]byte, 32<<10)
	return func(r io.Reader) ([]byte, error) {
		n, err := r.Read(buf)
		return append([]byte(nil), buf[:n]...), err
	}
}

type chunk struct {
	data []byte
	due  time.Time
}

// pipe forwards src to dst, each chunk oneWay after it was read. When src
// ends cleanly, dst's write side is closed once everything before the end
// was delivered; on any error both connections are cut.
func (p *Proxy) pipe(dst, src net.Conn, read ReadFunc) {
	q := make(chan chunk, queued)
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(q)
		for {
			b, err := read(src)
			if len(b) > 0 {
				select {
				case q <- chunk{data: b, due: time.Now().Add(p.oneWay)}:
				case <-stop:
					readErr <- nil
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()
	wake := make(chan struct{}, 1)
	for c := range q {
		released := p.clock == nil || p.clock.wait(c.due, wake)
		if !released {
			close(stop)
			cut(dst, src)
			for range q { // let the reader end
			}
			return
		}
		if _, err := dst.Write(c.data); err != nil {
			close(stop)
			cut(dst, src)
			for range q { // let the reader end
			}
			return
		}
	}
	if err := <-readErr; err != nil && !errors.Is(err, io.EOF) {
		cut(dst, src)
		return
	}
	if tc, ok := dst.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

func cut(conns ...net.Conn) {
	for _, c := range conns {
		_ = c.Close()
	}
}
