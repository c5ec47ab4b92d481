package store

import (
	"errors"

	"github.com/go-sql-driver/mysql"
	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialect names the SQL database behind a DB. Every difference between the
// two lives in this file.
type Dialect string

const (
	MySQL  Dialect = "mysql"
	SQLite Dialect = "sqlite"
)

// MySQL error numbers this package reacts to.
const (
	mysqlDupEntry        = 1062
	mysqlLockWaitTimeout = 1205
	mysqlDeadlock        = 1213
)

// forUpdate is the suffix that makes a SELECT lock the rows it reads.
// SQLite has no row locks: its write transactions start with BEGIN IMMEDIATE
// (see Open), which already serializes every writer.
func (d Dialect) forUpdate() string {
	if d == MySQL {
		return " FOR UPDATE"
	}
	return ""
}

// forShare is the suffix that makes a SELECT take shared locks on the rows
// it reads (and read the latest committed version); SQLite as forUpdate.
func (d Dialect) forShare() string {
	if d == MySQL {
		return " LOCK IN SHARE MODE"
	}
	return ""
}

// gooseDialect is the goose name of the dialect.
func (d Dialect) gooseDialect() goose.Dialect {
	if d == MySQL {
		return goose.DialectMySQL
	}
	return goose.DialectSQLite3
}

// isDuplicate reports whether err is a unique or primary key violation.
func isDuplicate(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == mysqlDupEntry
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		c := se.Code()
		return c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	}
	return false
}

// isRetryable reports a MySQL deadlock (1213) or lock wait timeout (1205):
// the transaction was rolled back and may simply be run again.
func isRetryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == mysqlDeadlock || me.Number == mysqlLockWaitTimeout)
}
