package server

import (
	"context"
	"encoding/csv"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/stacktest"
)

// TestConsoleOrdersCSVAtScale exports 2,000 and then 20,000 orders on both
// stores, read as a client reads them: every row arrives exactly once,
// newest first; the first rows reach the client while the store is still
// iterating; and the heap the export adds is printed for both sizes (it
// should not grow with the row count).
func TestConsoleOrdersCSVAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("20,000 orders")
	}
	stacktest.Each(t, func(t *testing.T, st *stacktest.Stack) {
		env := newConsoleEnvOn(t, st)
		b := env.login(access.RoleBoxOffice)
		base := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
		var heap []uint64
		inserted := 0
		for _, n := range []int{2_000, 20_000} {
			start := time.Now()
			insertExportOrders(t, env, base, inserted, n)
			took, added := time.Since(start), n-inserted
			inserted = n
			want := make([]int, n) // newest first: the highest k first
			for i := range want {
				want[i] = n - 1 - i
			}
			s := &csvStream{t: t, want: want}
			start = time.Now()
			b.stream("/console/orders.csv", s)
			exported := time.Since(start)
			s.done()
			t.Logf("%s, %d orders: inserted %d in %v, exported in %v (%.0f rows/s); %d flushes, the first after %d rows, "+
				"%d of them while the store still iterated; heap added during the export: %.0f KiB",
				st.Name, n, added, took.Round(time.Millisecond), exported.Round(time.Millisecond),
				float64(n)/exported.Seconds(), s.flushes, s.firstFlushRows, s.flushesInIteration, float64(s.peakHeap)/(1<<10))
			heap = append(heap, s.peakHeap)
		}
		t.Logf("%s: heap added by the export, 20,000 vs 2,000 orders: %.2f (1 = flat)", st.Name,
			float64(heap[1])/float64(max(heap[0], 1)))
	})
}

// exportOrderNo is the order number of the k-th bulk order.
func exportOrderNo(k int) string { return fmt.Sprintf("SFBULK%010d", k) }

// insertExportOrders adds orders from..to-1 of the test show: order k was
// placed k seconds after base (so newest first is k descending) and is
// pending, paid or cancelled by k mod 3; 500 rows a statement, one
// transaction. The customer is an email only: a name would cost a
// full-text insert per row, which under -race on SQLite triples the time.
func insertExportOrders(t *testing.T, env *consoleEnv, base time.Time, from, to int) {
	t.Helper()
	ctx := context.Background()
	tx, err := env.db.X().BeginTxx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const cols = 12
	tuple := "(" + strings.Repeat("?, ", cols-1) + "?)"
	for lo := from; lo < to; lo += 500 {
		hi := min(lo+500, to)
		args := make([]any, 0, cols*(hi-lo))
		for k := lo; k < hi; k++ {
			created := base.Add(time.Duration(k) * time.Second).UnixMilli()
			closed := int64(0)
			if k%3 != 0 {
				closed = created + 60_000
			}
			args = append(args, exportOrderNo(k), env.show.ID, 1+k%1000, k%3, 5000, 1,
				fmt.Sprintf("A-%d", 1+k%4), created, created+900_000, closed, exportCode(k), fmt.Sprintf("c%d@example.org", k))
		}
		q := `INSERT INTO order_info (order_no, show_id, user_id, status, amount_cents, seat_count, seat_ids,
 created_at, expire_at, closed_at, code, customer_email) VALUES ` + strings.Repeat(tuple+", ", hi-lo-1) + tuple
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("insert orders %d..%d: %v", lo, hi, err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// exportCode is k as 8 Crockford base32 digits: unique per order.
func exportCode(k int) string {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i] = core.CodeAlphabet[k&31]
		k >>= 5
	}
	return string(b)
}

// stream sends a GET with the browser's session to w, as the server would.
func (b *browser) stream(path string, w http.ResponseWriter) {
	b.env.t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	req.RemoteAddr = b.ip + ":40000"
	for _, c := range b.cookies {
		req.AddCookie(c)
	}
	b.env.e.ServeHTTP(w, req)
}

// csvStream is the client end of an export: it checks each row as it
// arrives against want and keeps nothing but the line being received, so
// the heap it measures is the server's. On the first data bytes and on
// every flush it looks at where the handler is: inside the store's
// iteration (streaming) or not (everything read first).
type csvStream struct {
	t       *testing.T
	want    []int // the bulk orders (k) in the order they must arrive
	header  http.Header
	status  int
	partial []byte // the line being received
	rows    int    // data rows received and checked
	sawHead bool
	flushes int
	// firstInIteration: the store was iterating when the first row came.
	firstInIteration   bool
	firstFlushRows     int // rows the client had at the first flush
	flushesInIteration int
	heapBase           uint64 // live heap when the response began
	peakHeap           uint64 // the most live heap the export added, at a flush
	errors             int
}

func (s *csvStream) Header() http.Header {
	if s.header == nil {
		s.header = http.Header{}
	}
	return s.header
}

func (s *csvStream) WriteHeader(code int) {
	s.status = code
	s.heapBase = liveHeap()
}

func (s *csvStream) Write(p []byte) (int, error) {
	if s.status == 0 {
		s.WriteHeader(http.StatusOK)
	}
	s.partial = append(s.partial, p...)
	for {
		i := slices.Index(s.partial, '\n')
		if i < 0 {
			break
		}
		s.line(string(s.partial[:i]))
		s.partial = s.partial[i+1:]
	}
	s.partial = slices.Clip(s.partial) // let the received lines go
	return len(p), nil
}

func (s *csvStream) line(l string) {
	fields, err := csv.NewReader(strings.NewReader(l)).Read()
	if err != nil {
		s.failf("line %d %q: %v", s.rows+1, l, err)
		return
	}
	if !s.sawHead {
		s.sawHead = true
		if !slices.Equal(fields, ordersCSVHeader) {
			s.failf("header %q, want %q", fields, ordersCSVHeader)
		}
		return
	}
	if s.rows == 0 {
		s.firstInIteration = inStoreIteration()
	}
	if s.rows >= len(s.want) {
		s.failf("row %d %q: only %d orders exist", s.rows+1, fields[1], len(s.want))
		s.rows++
		return
	}
	k := s.want[s.rows]
	want := []string{exportCode(k), exportOrderNo(k), core.OrderStatus(k % 3).String(), fmt.Sprintf("c%d@example.org", k)}
	if got := []string{fields[0], fields[1], fields[2], fields[12]}; !slices.Equal(got, want) {
		s.failf("row %d is %q, want %q (every order once, newest first)", s.rows+1, got, want)
	}
	s.rows++
}

func (s *csvStream) Flush() {
	if s.flushes++; s.flushes == 1 {
		s.firstFlushRows = s.rows
	}
	if inStoreIteration() {
		s.flushesInIteration++
	}
	if h := liveHeap(); h > s.heapBase {
		s.peakHeap = max(s.peakHeap, h-s.heapBase)
	}
}

// done checks what arrived once the handler returned.
func (s *csvStream) done() {
	s.t.Helper()
	if s.status != http.StatusOK || !strings.HasPrefix(s.header.Get("Content-Type"), "text/csv") {
		s.t.Fatalf("status %d, type %q", s.status, s.header.Get("Content-Type"))
	}
	if len(s.partial) > 0 {
		s.t.Errorf("the export ends in a partial line %q", s.partial)
	}
	if s.rows != len(s.want) {
		s.t.Errorf("%d rows arrived, want %d", s.rows, len(s.want))
	}
	if !s.firstInIteration {
		s.t.Error("the first rows reached the client after the store's iteration ended: the export does not stream")
	}
	if s.flushesInIteration < len(s.want)/1000 {
		s.t.Errorf("%d flushes for %d rows while the store iterated: the client waits for buffers to fill", s.flushesInIteration, len(s.want))
	}
}

func (s *csvStream) failf(format string, args ...any) {
	if s.errors++; s.errors <= 5 {
		s.t.Errorf(format, args...)
	}
}

// inStoreIteration reports whether the calling goroutine (the handler,
// writing) is inside the store's EachOrder: rows written from there were
// sent while the store was still reading.
func inStoreIteration() bool {
	buf := make([]byte, 64<<10)
	return strings.Contains(string(buf[:runtime.Stack(buf, false)]), "store.(*DB).EachOrder(")
}

// liveHeap is the heap still in use after a collection.
func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestConsoleOrdersCSVSafe: the export, with customers' names, e-mails and
// phones, is never stored by a browser or proxy, and no cell of it runs as
// a formula in a spreadsheet: a payment's txn id comes from the gateway,
// and one like "=HYPERLINK(...)" must arrive as text (issue 28 item 11).
func TestConsoleOrdersCSVSafe(t *testing.T) {
	env := newConsoleEnv(t)
	b := env.login(access.RoleBoxOffice)
	for i, txn := range []string{`=HYPERLINK("http://evil.example","x")`, "+1+2", "-2+3", "@SUM(A1)"} {
		o, err := env.engine.Place(context.Background(), core.PlaceRequest{UserID: int64(100 + i), ShowID: env.show.ID,
			SeatIDs: []string{fmt.Sprintf("A-%d", i+1)}, Customer: core.Customer{Name: "=cmd" + txn}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.engine.HandlePayment(context.Background(), core.Payment{TxnID: txn, OrderNo: o.OrderNo,
			AmountCents: o.AmountCents}); err != nil {
			t.Fatal(err)
		}
	}
	rec := b.do("GET", "/console/orders.csv", nil, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	if cc := rec.Header().Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
	rows, err := csv.NewReader(rec.Body).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want a header and 4 orders", len(rows))
	}
	for _, row := range rows[1:] {
		for i, cell := range row {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				t.Errorf("%s %q would run as a formula", ordersCSVHeader[i], cell)
			}
		}
	}
}
