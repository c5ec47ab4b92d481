package stacktest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jmoiron/sqlx"

	"seatflow/core"
	"seatflow/core/store"
)

// CommitFault is a store on the stack's database whose transactions can
// lose their COMMIT at the exact point where its outcome is unknown to the
// engine (core.ErrCommitUnknown). On MariaDB the fault is in the
// connection: the COMMIT goes out and the connection is cut before its
// reply is read (the commit lands), or the connection is cut as the
// COMMIT would go out (it does not); the driver's error goes through the
// store's own mapping. On SQLite, in process, a commit that landed is
// reported as unanswered, or the transaction is rolled back and reported
// the same. A fault is armed inside a transaction and hits its COMMIT only.
type CommitFault struct {
	core.Store
	mysql bool
}

// commitFaultNet is the go-sql-driver network whose connections watch for
// the markers below.
const commitFaultNet = "stacktest-commitfault"

// The marker statements: the connection that sends one cuts at its next
// COMMIT, after sending it (landed) or instead of sending it (lost).
var (
	markerLanded = []byte("SELECT 'stacktest: the next COMMIT lands unanswered'")
	markerLost   = []byte("SELECT 'stacktest: the next COMMIT is lost'")
)

var registerCommitFault sync.Once

// CommitFault opens another store on the stack's database, behind the fault.
func (s *Stack) CommitFault(t testing.TB) *CommitFault {
	t.Helper()
	dsn := s.DSN
	isMySQL := strings.HasPrefix(dsn, "mysql://")
	if isMySQL {
		registerCommitFault.Do(func() {
			mysql.RegisterDialContext(commitFaultNet, func(ctx context.Context, addr string) (net.Conn, error) {
				c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
				if err != nil {
					return nil, err
				}
				return &commitFaultConn{Conn: c}, nil
			})
		})
		cfg, err := mysql.ParseDSN(strings.TrimPrefix(dsn, "mysql://"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Net = commitFaultNet
		dsn = "mysql://" + cfg.FormatDSN()
	}
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &CommitFault{Store: db, mysql: isMySQL}
}

// commitFaultTx is a transaction of a CommitFault.
type commitFaultTx struct {
	core.Tx
	fault int // SQLite: 0, or faultLanded or faultLost
}

const (
	faultLanded = 1 + iota
	faultLost
)

// SQL lets the DB queue's outbox write in the transaction.
func (t *commitFaultTx) SQL() *sqlx.Tx { return t.Tx.(interface{ SQL() *sqlx.Tx }).SQL() }

var errRollBack = errors.New("stacktest: rolling back a commit that is to be lost")

func (f *CommitFault) InTx(ctx context.Context, fn func(core.Tx) error) error {
	var ft *commitFaultTx
	err := f.Store.InTx(ctx, func(tx core.Tx) error {
		ft = &commitFaultTx{Tx: tx}
		err := fn(ft)
		if err == nil && ft.fault == faultLost {
			return errRollBack
		}
		return err
	})
	if ft != nil && ft.fault != 0 && (err == nil || errors.Is(err, errRollBack)) {
		// As the store reports it: unavailable, and the outcome unknown.
		return &core.Error{Kind: core.KindUnavailable, Code: core.ErrStoreUnavailable.Code,
			Message: fmt.Sprintf("stacktest: commit unanswered (landed: %v)", ft.fault == faultLanded), Err: core.ErrCommitUnknown}
	}
	return err
}

// LoseCommit arms the COMMIT of tx, a transaction of f (as handed to the
// InTx callback): it reaches the database and its reply is lost (landed),
// or the connection dies as it is sent.
func (f *CommitFault) LoseCommit(ctx context.Context, tx core.Tx, landed bool) error {
	ft, ok := tx.(*commitFaultTx)
	if !ok {
		return fmt.Errorf("stacktest: LoseCommit on a %T, not a transaction of the CommitFault", tx)
	}
	if !f.mysql {
		ft.fault = map[bool]int{true: faultLanded, false: faultLost}[landed]
		return nil
	}
	marker := markerLost
	if landed {
		marker = markerLanded
	}
	_, err := ft.SQL().ExecContext(ctx, string(marker))
	return err
}

// commitFaultConn is a MariaDB connection that cuts itself at the COMMIT
// after a marker.
type commitFaultConn struct {
	net.Conn
	armed atomic.Int32 // 0, or faultLanded or faultLost
}

// comQuery is the MySQL protocol's COM_QUERY command byte; a packet is a
// 4-byte header, the command, the statement.
const comQuery = 0x03

func (c *commitFaultConn) Write(b []byte) (int, error) {
	if len(b) > 5 && b[4] == comQuery {
		switch q := b[5:]; {
		case bytes.Equal(q, markerLanded):
			c.armed.Store(faultLanded)
		case bytes.Equal(q, markerLost):
			c.armed.Store(faultLost)
		case string(q) == "COMMIT":
			switch c.armed.Swap(0) {
			case faultLanded:
				n, err := c.Conn.Write(b)
				c.Conn.Close()
				return n, err
			case faultLost:
				c.Conn.Close()
				return 0, net.ErrClosed
			}
		}
	}
	return c.Conn.Write(b)
}
