package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
)

// Best-available buyers (issue 30): instead of naming seats they saw free
// on the map, they ask for 1 to 4 seats together and let the engine choose
// them inside its atomic claim, so a 409 means no fitting set was left,
// not that another buyer took the same seats first. After a 409 they take
// what is left, apart, as a storefront would offer.

// Buyer modes of the rush (--buyers-mode).
const (
	BuyersNamed = "named"
	BuyersBest  = "best"
	BuyersBoth  = "both"
)

func validBuyersMode(m string) error {
	switch m {
	case BuyersNamed, BuyersBest, BuyersBoth:
		return nil
	}
	return fmt.Errorf("bench: --buyers-mode %q: want named, best or both", m)
}

// buyerModes is which rushes --buyers-mode asks for: false names seats,
// true asks for the best available.
func buyerModes(m string) []bool {
	switch m {
	case BuyersBest:
		return []bool{true}
	case BuyersBoth:
		return []bool{false, true}
	}
	return []bool{false}
}

// seatsLeft is one category of a 409 not_enough_seats.
type seatsLeft struct {
	Category string `json:"category"`
	Free     int    `json:"free"`
	Together int    `json:"together"`
}

// freeLeft is the free seats a 409 not_enough_seats says are left.
func freeLeft(ae *apiError) int {
	n := 0
	for _, l := range ae.Left {
		n += l.Free
	}
	return n
}

// bestBody is a POST /api/v1/orders asking for count seats.
func bestBody(userID, showID int64, count int, together bool, admission string) []byte {
	type best struct {
		Count    int  `json:"count"`
		Together bool `json:"together"`
	}
	type order struct {
		UserID    int64  `json:"user_id"`
		ShowID    int64  `json:"show_id"`
		Best      best   `json:"best_available"`
		Admission string `json:"admission,omitempty"`
	}
	body, _ := json.Marshal(order{userID, showID, best{count, together}, admission}) // cannot fail: numbers and strings
	return body
}

// buyBest is a best-available buyer's placements: no map read, until a
// hold, sold out or failure.
func (b *buyer) buyBest(ctx context.Context, admission string) {
	count, together := 1+rand.IntN(4), true
	for ctx.Err() == nil && !b.run.soldOut.Load() {
		held, err := b.place(ctx, bestBody(b.user, b.run.show, count, together, admission), admission)
		if held || err == nil {
			return // a hold, or the visit ended
		}
		ae, _ := isStatus(err, http.StatusConflict)
		if ae.Code != "not_enough_seats" {
			continue // another conflict (none expected): ask again
		}
		free := freeLeft(ae)
		if free == 0 {
			b.t.soldOut409++
			b.run.soldOut.Store(true)
			return
		}
		count, together = min(count, free), false
	}
}

// bestRows sets a best-available rush beside the named-seat rush of the
// same run (nil: none ran).
func bestRows(stack string, best rushResult, named *rushResult) []Row {
	if named == nil {
		return nil
	}
	name := rushName(best)
	perHold := func(r rushResult) float64 {
		if r.Holds == 0 {
			return 0
		}
		return float64(r.Statuses["409"]) / float64(r.Holds)
	}
	retries := 0.0 // a named-seat buyer sees sold out on the map, not in a 409
	if best.Holds > 0 {
		retries = float64(best.Statuses["409"]-best.SoldOut409) / float64(best.Holds)
	}
	return []Row{
		rushRow(stack, name+"goodput vs named-seat buyers", best.Goodput, "/s").vs("named-seat goodput", named.Goodput),
		rushRow(stack, name+"409 answers per hold vs named-seat buyers", perHold(best), "").vs("named-seat 409s per hold", perHold(*named)),
		rushRow(stack, name+"409 answers per hold, sold-out answers apart", retries, "").vs("named-seat 409s per hold", perHold(*named)),
	}
}
