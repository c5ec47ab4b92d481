package store

import (
	"errors"
	"fmt"
	"strings"

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

// prefixMatch is a condition "col starts with prefix" that an index on
// col serves, and its argument. MySQL: LIKE (its _ci collations serve it);
// SQLite: GLOB, which is case-sensitive like its BINARY indexes (its LIKE
// is not, and so cannot use them).
func (d Dialect) prefixMatch(col, prefix string) (string, any) {
	if d == MySQL {
		return col + ` LIKE ? ESCAPE '!'`, escapeLike(prefix) + "%"
	}
	return col + " GLOB ?", strings.NewReplacer("[", "[[]", "*", "[*]", "?", "[?]").Replace(prefix) + "*"
}

// fullTextMatch is the condition that finds order_info o rows whose
// customer name has a word starting with each term (terms are letters and
// digits only), and its argument: MariaDB's FULLTEXT index in boolean mode,
// SQLite's FTS5 table order_customer_fts.
func (d Dialect) fullTextMatch(terms []string) (string, any) {
	parts := make([]string, len(terms))
	if d == MySQL {
		for i, t := range terms {
			parts[i] = "+" + t + "*"
		}
		return "MATCH (o.customer_name) AGAINST (? IN BOOLEAN MODE)", strings.Join(parts, " ")
	}
	for i, t := range terms {
		parts[i] = `"` + t + `"*`
	}
	return "o.id IN (SELECT rowid FROM order_customer_fts WHERE order_customer_fts MATCH ?)", strings.Join(parts, " ")
}

// before is the keyset condition "(at, id) sorts before (atV, idV)" in a
// form the database turns into ranges of an index ending in (at, id):
// MariaDB does not for a row comparison, SQLite does not for the OR (it
// would read two ranges and sort them).
func (d Dialect) before(at, id string, atV, idV int64) (string, []any) {
	if d == MySQL {
		return fmt.Sprintf("(%s < ? OR (%s = ? AND %s < ?))", at, at, id), []any{atV, atV, idV}
	}
	return fmt.Sprintf("(%s, %s) < (?, ?)", at, id), []any{atV, idV}
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

// isDuplicateCode reports a violation of order_info's unique code index
// (the two databases name the index or the column in the message).
func isDuplicateCode(err error) bool {
	if err == nil || !isDuplicate(err) {
		return false
	}
	msg := err.Error()
	return strings.Contains(msg, "uk_code") || strings.Contains(msg, "order_info.code")
}

// isRetryable reports a MySQL deadlock (1213) or lock wait timeout (1205):
// the transaction was rolled back and may simply be run again.
func isRetryable(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == mysqlDeadlock || me.Number == mysqlLockWaitTimeout)
}
