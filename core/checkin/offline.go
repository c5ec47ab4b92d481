package checkin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"seatflow/core"
)

// Offline gates. A gate that may lose its connection downloads its show's
// ticket list (List) and, while offline, decides scans from it in the
// browser (static/door.js); the scans it admitted wait there and are sent
// with Sync once the connection is back. The list holds no codes, only
// salted hashes of them: no code can be read off it, but an 8-character
// code is short enough to find by trying them all against a hash, so a
// gate's device is kept like the tickets themselves (door.js forgets a
// list a day and a half old once its scans are sent).
// Sync records each offline admission at the time and gate it happened. A
// ticket that another scan had admitted (another offline gate, one gate
// twice, an online gate) went in twice: the scan that reached the server
// second becomes a double_entry case for ops, naming both gates and times.

// ResultDoubleEntry is a synced offline admission of a ticket another scan
// had admitted; DiscrepancyDoubleEntry the kind of the case it opens.
const (
	ResultDoubleEntry      = "double_entry"
	DiscrepancyDoubleEntry = "double_entry"
)

// ListValid is the state of a ticket that admits; any other state is the
// reason it does not (ReasonRefunded, …).
const ListValid = "valid"

// MaxSyncScans bounds one Sync; a gate with more sends them in parts.
const MaxSyncScans = 500

// maxCodeLen bounds a synced scan's code (what a QR may carry; a ticket's
// is 8 characters, a seat's 10).
const maxCodeLen = 64

// syncSkew is how far in the future an offline scan's time may be (the
// gate's clock runs ahead of the server's); syncMaxAge how old it may be.
// Past either, Sync records the scan at its own time.
const (
	syncSkew   = 5 * time.Minute
	syncMaxAge = 7 * 24 * time.Hour
)

// ListTicket is one order's ticket in a show's list.
type ListTicket struct {
	Hash     string   `json:"hash"`  // CodeHash(List.Salt, the order's code)
	State    string   `json:"state"` // ListValid or why it does not admit
	Seats    []string `json:"seats"`
	Admitted []string `json:"admitted,omitempty"` // seats admitted when the list was made
	// SeatCodes are the seats' own codes, hashed like the order's: each
	// admits its seat only, and shares the seat's admission with the
	// order code (a seat let in by either is in).
	SeatCodes []ListSeatCode `json:"seat_codes,omitempty"`
}

// ListSeatCode is one seat's own ticket code in a list.
type ListSeatCode struct {
	Hash string `json:"hash"` // CodeHash(List.Salt, the seat's code)
	Seat string `json:"seat"`
}

// List is a show's tickets as an offline gate needs them.
type List struct {
	ShowID  int64        `json:"show_id"`
	At      time.Time    `json:"generated_at"`
	Salt    string       `json:"salt"`
	Tickets []ListTicket `json:"tickets"`
}

// ListRow is one seat of a show's paid or refunded order (SeatID "" for an
// order with no seats left), as the store reads them for a list.
type ListRow struct {
	OrderNo  string
	Code     string
	Status   core.OrderStatus
	SeatID   string
	SeatCode string // the seat's own ticket code
	Admitted bool
}

// OfflineScan is one admission an offline gate made.
type OfflineScan struct {
	ID      string    `json:"id"` // the gate's random id of the scan, 16 hex digits
	Code    string    `json:"code"`
	At      time.Time `json:"at"`
	SeatIDs []string  `json:"seat_ids,omitempty"`
}

// SyncRequest is what one gate sends when its connection is back.
type SyncRequest struct {
	Gate   string
	ShowID int64 // when not 0, the show the gate admits to
	Actor  string
	Scans  []OfflineScan
}

// Synced is the server's record of one offline scan.
type Synced struct {
	ID      string   `json:"id"`
	Result  string   `json:"result"` // admitted, double_entry or not_valid
	Reason  string   `json:"reason,omitempty"`
	OrderNo string   `json:"order_no,omitempty"`
	Seats   []string `json:"seats,omitempty"`
	// First is the scan that had admitted the ticket (double_entry), and
	// CaseID the case opened for ops.
	First  *Entry `json:"first,omitempty"`
	CaseID int64  `json:"case_id,omitempty"`
	// AtCorrected: the gate's time was ahead of the server's or over
	// syncMaxAge old, and the scan is recorded at the sync's time.
	AtCorrected bool `json:"at_corrected,omitempty"`
}

// CodeHash is how a list names a code: hex of the first 16 bytes of
// SHA-256(salt + code), the code normalized (core.NormalizeCode).
func CodeHash(salt, code string) string {
	sum := sha256.Sum256([]byte(salt + code))
	return hex.EncodeToString(sum[:16])
}

// List makes show's ticket list under a fresh salt.
func (d *Desk) List(ctx context.Context, showID int64) (List, error) {
	if showID <= 0 {
		return List{}, core.Invalidf("show_id must be a positive integer")
	}
	rows, err := d.store.TicketRows(ctx, showID)
	if err != nil {
		return List{}, err
	}
	l := List{ShowID: showID, At: d.clock.Now().UTC(), Salt: newScanID(), Tickets: []ListTicket{}}
	for i, r := range rows {
		if i == 0 || r.OrderNo != rows[i-1].OrderNo {
			state := ListValid
			if r.Status != core.StatusPaid {
				state = reasonOf(r.Status)
			}
			l.Tickets = append(l.Tickets, ListTicket{Hash: CodeHash(l.Salt, r.Code), State: state, Seats: []string{}})
		}
		t := &l.Tickets[len(l.Tickets)-1]
		if r.SeatID != "" {
			t.Seats = append(t.Seats, r.SeatID)
			t.SeatCodes = append(t.SeatCodes, ListSeatCode{Hash: CodeHash(l.Salt, r.SeatCode), Seat: r.SeatID})
			if r.Admitted {
				t.Admitted = append(t.Admitted, r.SeatID)
			}
		}
	}
	return l, nil
}

// Sync records an offline gate's admissions, oldest first, each at its
// own time: admitted, double_entry (a case opened) or not_valid (the
// ticket stopped admitting after the list was made). Sent again (the
// answer was lost), a scan is recognized by its id: nothing changes.
func (d *Desk) Sync(ctx context.Context, r SyncRequest) ([]Synced, error) {
	gate, err := checkGate(r.Gate)
	if err != nil {
		return nil, err
	}
	if err := checkScans(r.Scans); err != nil {
		return nil, err
	}
	// A gate's clock may be wrong; the scan happened all the same. A time
	// ahead of the server's, or too old to be this visit's, is recorded
	// at the server's time of the sync, and the answer says so.
	now := d.clock.Now().UTC()
	scans := slices.Clone(r.Scans)
	corrected := make(map[string]bool)
	for i, s := range scans {
		if s.At.After(now.Add(syncSkew)) || s.At.Before(now.Add(-syncMaxAge)) {
			scans[i].At, corrected[s.ID] = now, true
		}
	}
	slices.SortStableFunc(scans, func(a, b OfflineScan) int { return a.At.Compare(b.At) })
	out := make([]Synced, 0, len(scans))
	for _, s := range scans {
		res, err := d.syncOne(ctx, gate, r.Actor, r.ShowID, s)
		if err != nil {
			return nil, fmt.Errorf("sync scan %s of gate %s: %w", s.ID, gate, err)
		}
		res.AtCorrected = corrected[s.ID]
		d.results.WithLabelValues(res.Result).Inc()
		out = append(out, res)
	}
	return out, nil
}

func (d *Desk) syncOne(ctx context.Context, gate, actor string, showID int64, s OfflineScan) (Synced, error) {
	res := Synced{ID: s.ID}
	o, seats, err := d.ticket(ctx, s.Code, "", s.SeatIDs, showID)
	if r := notValid(err); r != nil {
		res.Result, res.Reason, res.OrderNo, res.Seats = ResultNotValid, r.Reason, r.OrderNo, r.Seats
		return res, nil
	}
	if err != nil {
		return res, err
	}
	scan := Scan{OrderNo: o.OrderNo, SeatIDs: seats, Gate: gate, Actor: actor, At: s.At.UTC(), ID: s.ID}
	_, first, err := d.apply(ctx, o, scan, showID)
	if r := notValid(err); r != nil {
		res.Result, res.Reason, res.OrderNo = ResultNotValid, r.Reason, o.OrderNo
		return res, nil
	}
	if err != nil {
		return res, err
	}
	res.OrderNo, res.Seats = o.OrderNo, seats
	if first == nil {
		res.Result = ResultAdmitted
		return res, nil
	}
	res.Result, res.First = ResultDoubleEntry, first
	res.CaseID, err = d.store.OpenCase(ctx, doubleEntry(scan, *first, d.clock.Now().UTC()))
	return res, err
}

// doubleEntry is the case of scan letting in a ticket first had admitted,
// the two entries in the order they happened.
func doubleEntry(scan Scan, first Entry, now time.Time) core.Discrepancy {
	again := Entry{SeatID: first.SeatID, At: scan.At, Gate: scan.Gate, By: scan.Actor}
	a, b := first, again
	if b.At.Before(a.At) {
		a, b = b, a
	}
	return core.Discrepancy{OrderNo: scan.OrderNo, TxnID: "double-entry-" + scan.ID, Kind: DiscrepancyDoubleEntry,
		CreatedAt: now, Status: core.DiscrepancyOpen,
		Note: fmt.Sprintf("ticket %s of order %s admitted twice: %s at gate %s by %s, then %s at gate %s by %s",
			first.SeatID, scan.OrderNo, a.At.Format(time.RFC3339), a.Gate, a.By, b.At.Format(time.RFC3339), b.Gate, b.By)}
}

// notValid is err's not_valid refusal, or nil.
func notValid(err error) *Refusal {
	var ce *core.Error
	if errors.Is(err, ErrNotValid) && errors.As(err, &ce) {
		r, _ := ce.Detail.(*Refusal)
		return r
	}
	return nil
}

func checkScans(scans []OfflineScan) error {
	if len(scans) == 0 || len(scans) > MaxSyncScans {
		return &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Field: "scans",
			Message: fmt.Sprintf("scans: send 1 to %d scans", MaxSyncScans)}
	}
	seen := make(map[string]bool, len(scans))
	for i, s := range scans {
		bad := func(field, msg string) error {
			return &core.Error{Kind: core.KindInvalid, Code: "invalid_request", Field: fmt.Sprintf("scans[%d].%s", i, field),
				Message: fmt.Sprintf("scans[%d].%s: %s", i, field, msg)}
		}
		switch {
		case !isScanID(s.ID):
			return bad("id", "want 16 lowercase hex digits")
		case seen[s.ID]:
			return bad("id", "sent twice in one request")
		case strings.TrimSpace(s.Code) == "" || utf8.RuneCountInString(s.Code) > maxCodeLen:
			return bad("code", fmt.Sprintf("give the scanned code, at most %d characters", maxCodeLen))
		}
		seen[s.ID] = true
	}
	return nil
}

func isScanID(s string) bool {
	if len(s) != 16 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// reasonOf is why an order of status st does not admit.
func reasonOf(st core.OrderStatus) string {
	switch st {
	case core.StatusPending:
		return ReasonUnpaid
	case core.StatusCancelled:
		return ReasonCancelled
	case core.StatusRefunded:
		return ReasonRefunded
	}
	return st.String()
}
