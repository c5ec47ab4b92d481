package core

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// DefaultTimeoutMaxAttempts is how many times a timeout message is handled
// and fails before it becomes a dead letter (SEATFLOW_TIMEOUT_MAX_ATTEMPTS):
// RocketMQ's default of 16 reconsumes.
const DefaultTimeoutMaxAttempts = 16

// Dead-letter sources: which queue gave up on the message.
const (
	DeadLetterDBQueue  = "dbqueue"
	DeadLetterRocketMQ = "rocketmq"
)

// maxDeadLetterError bounds the stored error text (a panic's stack is
// long); MaxDeadLetterPayload bounds a stored payload (a broker body that is
// not a timeout message can be megabytes).
const (
	maxDeadLetterError   = 2000
	MaxDeadLetterPayload = 16000
)

// AuditRetryDeadLetter is the audit action of a dead letter sent again.
const AuditRetryDeadLetter = "dead_letter_retry"

// ErrDeadLetterNotFound: no dead letter with that id (retried already).
var ErrDeadLetterNotFound = &Error{Kind: KindNotFound, Code: "dead_letter_not_found", Message: "dead letter not found"}

// DeadLetter is a timeout message its queue gave up on after MaxAttempts
// failed deliveries. Nothing retries it until staff do (RetryDeadLetter);
// meanwhile reconcile's sweep still ends the order when it expires.
type DeadLetter struct {
	ID        int64
	MsgKey    string // the broker's message id; "" for the DB queue
	Source    string // DeadLetterDBQueue or DeadLetterRocketMQ
	Msg       TimeoutMsg
	Payload   string // the message as delivered
	Attempts  int
	LastError string // "" when the queue does not say (RocketMQ's DLQ)
	At        time.Time
}

// NewDeadLetter builds the dead letter of msg, with its payload and a
// bounded error text.
func NewDeadLetter(source string, msg TimeoutMsg, attempts int, lastErr string, at time.Time) DeadLetter {
	payload, _ := json.Marshal(msg) // a struct of strings, ints and a time: cannot fail
	if len(lastErr) > maxDeadLetterError {
		// Cut on a rune boundary: MySQL refuses invalid UTF-8.
		lastErr = strings.ToValidUTF8(lastErr[:maxDeadLetterError], "")
	}
	return DeadLetter{Source: source, Msg: msg, Payload: string(payload), Attempts: attempts, LastError: lastErr, At: at}
}

// DeadLetterStore keeps dead letters (the dead_letter table).
type DeadLetterStore interface {
	// AddDeadLetter stores d; false when one with d.MsgKey is stored already
	// (a DLQ message delivered twice).
	AddDeadLetter(ctx context.Context, d DeadLetter) (bool, error)
	// DeadLetters lists dead letters, newest first.
	DeadLetters(ctx context.Context, limit int) ([]DeadLetter, error)
	DeadLetter(ctx context.Context, id int64) (DeadLetter, error) // ErrDeadLetterNotFound
	// InDeadLetterTx runs fn in one transaction (InTx's retries).
	InDeadLetterTx(ctx context.Context, fn func(DeadLetterTx) error) error
}

// DeadLetterTx is the transaction a retry removes its dead letter in.
type DeadLetterTx interface {
	// DeleteDeadLetter reports whether this caller deleted the row.
	DeleteDeadLetter(ctx context.Context, id int64) (bool, error)
	AddAudit(ctx context.Context, a AuditEntry) error
}

// RetryDeadLetter sends dead letter id's message again, due now, and
// removes the dead letter with its audit row in one transaction. The send
// comes first: the timeout handler is idempotent, so a send whose removal
// then fails (or loses to a concurrent retry, ErrDeadLetterNotFound) is
// only a duplicate delivery, while a removal before a failed send would
// lose the message.
func (e *Engine) RetryDeadLetter(ctx context.Context, s DeadLetterStore, id int64, staff *StaffAction) (DeadLetter, error) {
	d, err := s.DeadLetter(ctx, id)
	if err != nil {
		return DeadLetter{}, err
	}
	if err := e.queue.Send(ctx, []TimeoutMsg{d.Msg}, 0, 0); err != nil {
		return DeadLetter{}, &Error{Kind: KindUnavailable, Code: "queue_unavailable",
			Message: fmt.Sprintf("dead letter %d: send again: %v", id, err)}
	}
	err = s.InDeadLetterTx(ctx, func(tx DeadLetterTx) error {
		deleted, err := tx.DeleteDeadLetter(ctx, id)
		if err != nil {
			return err
		}
		if !deleted {
			return ErrDeadLetterNotFound
		}
		if staff == nil {
			return nil
		}
		return tx.AddAudit(ctx, staff.Entry(e.clock.Now(), AuditRetryDeadLetter, "order:"+d.Msg.OrderNo,
			map[string]any{"dead_letter": id, "hop": d.Msg.Hop, "attempts": d.Attempts, "source": d.Source}))
	})
	if err != nil {
		return DeadLetter{}, err
	}
	return d, nil
}
