package core

import (
	"context"
	"crypto/rand"
	"errors"
	"regexp"
	"strings"
)

// Short order codes: 8 characters of Crockford's base32 (40 random bits),
// easy to read out at a counter. The alphabet has no I, L, O or U; on
// input I and L read as 1, O as 0, and case does not matter.
const (
	CodeAlphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
	CodeLen      = 8
	// codeAttempts bounds the draws of one placement: with 2^40 codes a
	// second draw is already rare, a sixth would mean a broken generator.
	codeAttempts = 6
)

// ErrCodeTaken is what Tx.InsertOrder returns when another order has the
// code already; Place then draws another.
var ErrCodeTaken = &Error{Kind: KindConflict, Code: "order_code_taken", Message: "order code is taken"}

// NewOrderCode draws a random code.
func NewOrderCode() string { return randomCode(CodeLen) }

// randomCode draws n characters of CodeAlphabet from crypto/rand.
func randomCode(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = CodeAlphabet[b[i]&31]
	}
	return string(b)
}

// NormalizeCode upper-cases s, maps Crockford's confusables (I, L → 1;
// O → 0) and drops dashes people write for readability; ok is false when
// what is left is not base32 of at most CodeLen characters.
func NormalizeCode(s string) (code string, ok bool) {
	return normalizeCode(s, CodeLen)
}

// normalizeCode is NormalizeCode for codes of at most max characters.
func normalizeCode(s string, max int) (code string, ok bool) {
	s = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", ""))
	if s == "" || len(s) > max {
		return "", false
	}
	b := []byte(s)
	for i, c := range b {
		switch c {
		case 'I', 'L':
			b[i] = '1'
		case 'O':
			b[i] = '0'
		}
		if strings.IndexByte(CodeAlphabet, b[i]) < 0 {
			return "", false
		}
	}
	return string(b), true
}

// insertWithCode inserts o, drawing a fresh code (from draw) while the
// one it has is taken. The failed INSERT is undone by the database as a
// statement, so the transaction goes on.
func insertWithCode(ctx context.Context, tx Tx, o *Order, draw func() string) error {
	for i := 1; ; i++ {
		err := tx.InsertOrder(ctx, *o)
		if !errors.Is(err, ErrCodeTaken) || i == codeAttempts {
			return err
		}
		o.Code = draw()
	}
}

// orderNoPattern is newOrderNo's form in any case: "SF", the UTC second
// and 12 hex digits.
var orderNoPattern = regexp.MustCompile(`(?i)^sf[0-9]{14}[0-9a-f]{12}$`)

// NormalizeOrderNo spells an order number typed in any case as newOrderNo
// does ("SF", digits, lower-case hex); anything else is returned as is.
// MariaDB's collation finds the row by any spelling, but the engine keys
// what it writes by the exact string, so a number must reach it as stored.
func NormalizeOrderNo(s string) string {
	if !orderNoPattern.MatchString(s) {
		return s
	}
	return "SF" + strings.ToLower(s[2:])
}

// OrderNo resolves what a caller typed for an order: a short code (in any
// case, with confusables) or the order number itself, normalized
// (NormalizeOrderNo) when it is not a code. An unknown code is
// ErrOrderNotFound. Every handler that takes an order reference goes
// through it.
func (e *Engine) OrderNo(ctx context.Context, ref string) (string, error) {
	code, ok := NormalizeCode(ref)
	if !ok || len(code) != CodeLen {
		return NormalizeOrderNo(ref), nil
	}
	return e.store.OrderNoByCode(ctx, code)
}
