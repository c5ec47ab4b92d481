package web

// NewShowData is the new-show form as the manager filled it in, with the
// error that sent it back (already in words: it may name a CSV line).
type NewShowData struct {
	Name, Venue, StartsAt, Currency string
	Categories                      string // one "code,name,price_cents" a line
	Source                          string // grid | upload
	Rows, PerRow, GridCategory      string
	Error                           string
}
