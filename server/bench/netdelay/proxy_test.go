package netdelay

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"
)

// echoServer answers every connection with what it reads, until EOF, then
// closes. It stops with the test.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func listen(t *testing.T, target string, oneWay time.Duration, opt Options) *Proxy {
	t.Helper()
	p, err := Listen(target, oneWay, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close proxy: %v", err)
		}
	})
	return p
}

// TestRoundTripDelay: a request and its answer each cross the proxy once,
// so a round trip takes at least 2 × the one-way delay, and the connection
// set-up one round trip more.
func TestRoundTripDelay(t *testing.T) {
	for _, oneWay := range []time.Duration{0, 500 * time.Microsecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		t.Run(oneWay.String(), func(t *testing.T) {
			p := listen(t, echoServer(t), oneWay, Options{})
			start := time.Now()
			c, err := net.Dial("tcp", p.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			r := bufio.NewReader(c)
			var rtts []time.Duration
			for i := range 5 {
				sent := time.Now()
				msg := fmt.Sprintf("ping %d\n", i)
				if _, err := io.WriteString(c, msg); err != nil {
					t.Fatal(err)
				}
				got, err := r.ReadString('\n')
				if err != nil {
					t.Fatal(err)
				}
				if got != msg {
					t.Fatalf("echo %q, want %q", got, msg)
				}
				rtt := time.Since(sent)
				if i == 0 {
					rtt = time.Since(start) // includes the set-up round trip
					if rtt < 4*oneWay {
						t.Errorf("first round trip with set-up took %v, want ≥ %v", rtt, 4*oneWay)
					}
				} else if rtt < 2*oneWay {
					t.Errorf("round trip %d took %v, want ≥ %v", i, rtt, 2*oneWay)
				}
				rtts = append(rtts, rtt)
			}
			t.Logf("one-way %v: round trips %v", oneWay, rtts)
		})
	}
}

// TestConcurrentStreamsIntact: many connections at once, each streaming
// random bytes in random-sized writes, get exactly their own bytes back in
// order, and a half-close reaches the server (the echo ends with EOF).
func TestConcurrentStreamsIntact(t *testing.T) {
	p := listen(t, echoServer(t), 500*time.Microsecond, Options{})
	const conns, size = 16, 1 << 20
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	start := time.Now()
	for n := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- stream(p.Addr(), n, size)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	t.Logf("%d connections × %d KiB echoed through a 0.5 ms proxy in %v", conns, size>>10, time.Since(start))
}

func stream(addr string, n, size int) error {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	want := make([]byte, size)
	_, _ = rand.Read(want)
	writeErr := make(chan error, 1)
	go func() {
		rest := want
		for len(rest) > 0 {
			k := min(len(rest), 1+mrand.IntN(8<<10))
			if _, err := c.Write(rest[:k]); err != nil {
				writeErr <- err
				return
			}
			rest = rest[k:]
		}
		writeErr <- c.(*net.TCPConn).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		return fmt.Errorf("conn %d: read: %w", n, err)
	}
	if err := <-writeErr; err != nil {
		return fmt.Errorf("conn %d: write: %w", n, err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < min(len(got), len(want)) && got[i] == want[i] {
			i++
		}
		return fmt.Errorf("conn %d: got %d bytes, want %d; first difference at byte %d", n, len(got), len(want), i)
	}
	return nil
}

// TestStalledConnectionDoesNotBlockOthers: a connection whose server never
// answers leaves another connection's round trips free to complete.
func TestStalledConnectionDoesNotBlockOthers(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	release := make(chan struct{})
	stalled := make(chan struct{})
	go func() {
		first := true
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if first {
				first = false
				go func() { // reads one byte, then never answers
					defer c.Close()
					_, _ = c.Read(make([]byte, 1))
					close(stalled)
					<-release
				}()
				continue
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	defer close(release)
	p := listen(t, ln.Addr().String(), 2*time.Millisecond, Options{})

	a, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	<-stalled // a's server holds its connection open without answering
	b, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	r := bufio.NewReader(b)
	for i := range 20 {
		msg := fmt.Sprintf("b %d\n", i)
		if _, err := io.WriteString(b, msg); err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadString('\n')
		if err != nil || got != msg {
			t.Fatalf("b's round trip %d: %q, %v", i, got, err)
		}
	}
}

// TestRepliesRewritten: the Replies hook cuts and rewrites the target's
// stream, and only that direction.
func TestRepliesRewritten(t *testing.T) {
	upper := func(r io.Reader) ([]byte, error) {
		b := make([]byte, 4096)
		n, err := r.Read(b)
		return bytes.ToUpper(b[:n]), err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	seen := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		line, _ := bufio.NewReader(c).ReadString('\n')
		seen <- line
		_, _ = io.WriteString(c, "reply "+line)
	}()
	p := listen(t, ln.Addr().String(), time.Millisecond, Options{Replies: upper})
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if s := <-seen; s != "hello\n" {
		t.Errorf("server read %q, want the request unchanged", s)
	}
	if string(got) != "REPLY HELLO\n" {
		t.Errorf("client read %q, want the rewritten reply", got)
	}
}

// TestCloseCutsOpenConnections: Close returns with a connection still open,
// and that connection then sees EOF.
func TestCloseCutsOpenConnections(t *testing.T) {
	p, err := Listen(echoServer(t), 0, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Read(make([]byte, 1)); err == nil {
		t.Errorf("read %d bytes after Close, want the connection cut", n)
	}
	if _, err := Listen("127.0.0.1:1", -time.Millisecond, Options{}); err == nil {
		t.Error("negative delay accepted")
	}
}
