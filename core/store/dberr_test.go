package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/go-sql-driver/mysql"

	"seatflow/core"
	"seatflow/core/testenv"
)

func TestConnectionLost(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &net.AddrError{Err: "connection refused"}}
	tests := []struct {
		name string
		err  error
		lost bool
	}{
		{"bad conn", driver.ErrBadConn, true},
		{"bad conn, wrapped", fmt.Errorf("query: %w", driver.ErrBadConn), true},
		{"mysql invalid conn", mysql.ErrInvalidConn, true},
		{"conn done", sql.ErrConnDone, true},
		{"dial refused", refused, true},
		{"dial refused, wrapped twice", fmt.Errorf("a: %w", fmt.Errorf("b: %w", refused)), true},
		{"reset, bare errno", fmt.Errorf("write: %w", syscall.ECONNRESET), true},
		{"server shutting down", &mysql.MySQLError{Number: 1053, Message: "Server shutdown in progress"}, true},
		{"too many connections", &mysql.MySQLError{Number: 1040, Message: "Too many connections"}, true},
		{"duplicate key", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry"}, false},
		{"deadlock", &mysql.MySQLError{Number: 1213, Message: "Deadlock found"}, false},
		{"no rows", sql.ErrNoRows, false},
		{"plain", errors.New("syntax error near SELEC"), false},
		{"caller deadline", context.DeadlineExceeded, false},
		{"caller cancel, wrapped", fmt.Errorf("q: %w", context.Canceled), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := connectionLost(tc.err); got != tc.lost {
				t.Fatalf("connectionLost(%v) = %v, want %v", tc.err, got, tc.lost)
			}
			err := dbErr(tc.err, "order %s", "SF1")
			if got := core.ErrorKind(err) == core.KindUnavailable; got != tc.lost {
				t.Errorf("dbErr kind %v, unavailable=%v; want unavailable=%v", core.ErrorKind(err), got, tc.lost)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("dbErr lost the cause: %v", err)
			}
			if !strings.Contains(err.Error(), "order SF1") {
				t.Errorf("dbErr %q does not say what it was doing", err)
			}
		})
	}
}

// A database that goes away under an open store turns every read and
// transaction into store_unavailable, never an unclassified error, and the
// same store works again once the database is back: no reopen needed.
func TestReadsWhileDatabaseIsAway(t *testing.T) {
	dsn := testenv.NewMySQLDatabase(t)
	cfg, err := mysql.ParseDSN(strings.TrimPrefix(dsn, "mysql://"))
	if err != nil {
		t.Fatal(err)
	}
	p := startProxy(t, cfg.Addr)
	cfg.Addr = p.addr
	db := openMigrated(t, "mysql://"+cfg.FormatDSN())
	ctx := context.Background()
	if _, err := db.Shows(ctx); err != nil {
		t.Fatalf("shows through the proxy: %v", err)
	}

	p.stop()
	calls := []struct {
		name string
		call func() error
	}{
		{"Shows", func() error { _, err := db.Shows(ctx); return err }},
		{"Show", func() error { _, err := db.Show(ctx, 1); return err }},
		{"Order", func() error { _, err := db.Order(ctx, "SF1"); return err }},
		{"Events", func() error { _, err := db.Events(ctx, "SF1"); return err }},
		{"TakenSeats", func() error { _, err := db.TakenSeats(ctx, 1); return err }},
		{"PendingOrders", func() error { _, _, err := db.PendingOrders(ctx, PendingQuery{}); return err }},
		{"InTx", func() error {
			return db.InTx(ctx, func(tx core.Tx) error { _, err := tx.OrderForUpdate(ctx, "SF1"); return err })
		}},
		{"Ping", func() error { return db.Ping(ctx) }},
	}
	for _, c := range calls {
		err := c.call()
		if !errors.Is(err, core.ErrStoreUnavailable) || core.ErrorKind(err) != core.KindUnavailable {
			t.Errorf("%s with the database away: %v, want store_unavailable", c.name, err)
		}
	}

	p.start(t)
	if _, err := db.Shows(ctx); err != nil {
		t.Errorf("shows after the database came back: %v", err)
	}
}

// proxy forwards TCP to a target; stop cuts every connection and refuses
// new ones, start listens again on the same address.
type proxy struct {
	target, addr string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
	wg           sync.WaitGroup
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	p := &proxy{target: target, addr: "127.0.0.1:0"}
	p.start(t)
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); _, _ = io.Copy(up, c); up.Close() }()
			go func() { defer p.wg.Done(); _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

func (p *proxy) stop() {
	p.mu.Lock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}
