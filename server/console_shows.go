package server

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"seatflow/core"
	"seatflow/web"
)

// maxPlanUpload bounds an uploaded plan file, as planBodyLimit does the API's.
const maxPlanUpload = 8 << 20

// csvPlanHeader is the one header a CSV plan may have.
var csvPlanHeader = []string{"section", "row", "number", "category", "x", "y"}

func (cn *console) newShowForm(c echo.Context) error {
	d := web.NewShowData{Currency: "EUR", Categories: "STD,Standard,25.00", Source: "grid", Rows: "10", PerRow: "20",
		GridCategory: "STD"}
	return render(c, http.StatusOK, web.NewShowPage(cn.page(c, "newshow.title", web.NavShows), d))
}

// createShow sets a show up from the form: a bad form or plan comes back
// with the reason in words (a CSV plan's names its line), nothing written.
func (cn *console) createShow(c echo.Context) error {
	d := web.NewShowData{Name: c.FormValue("name"), Venue: c.FormValue("venue"), StartsAt: c.FormValue("starts_at"),
		Currency: strings.TrimSpace(c.FormValue("currency")), Categories: c.FormValue("categories"),
		Source: c.FormValue("source"), Rows: c.FormValue("rows"), PerRow: c.FormValue("seats_per_row"),
		GridCategory: strings.TrimSpace(c.FormValue("grid_category")), Draft: c.FormValue("draft") != ""}
	n, csvPlan, err := cn.newShowFromForm(c, &d)
	var v web.ShowPreview
	if err == nil {
		if v.Categories, v.Seats, err = core.PreviewShow(n); err == nil {
			err = everyCategoryUsed(v)
		}
	}
	if err == nil && c.FormValue("preview") != "" {
		d.Preview = &v
		return render(c, http.StatusOK, web.NewShowPage(cn.page(c, "newshow.title", web.NavShows), d))
	}
	if err == nil {
		var show core.Show
		if show, err = cn.Engine.CreateShow(c.Request().Context(), n); err == nil {
			cn.audit(c, core.AuditEntry{Action: core.AuditShowCreate, Target: "show:" + strconv.FormatInt(show.ID, 10),
				Detail: map[string]any{"name": show.Name, "seats": show.SeatCount}})
			return c.Redirect(http.StatusSeeOther, web.URL(fmt.Sprintf("/shows/%d?msg=show_created", show.ID)))
		}
	}
	if core.ErrorKind(err) != core.KindInvalid {
		return err
	}
	d.Error = planMessage(err, csvPlan)
	return render(c, http.StatusUnprocessableEntity, web.NewShowPage(cn.page(c, "newshow.title", web.NavShows), d))
}

// everyCategoryUsed refuses a price category no seat has: it would sit in
// the map's legend with nothing to sell.
func everyCategoryUsed(v web.ShowPreview) error {
	for i, n := range v.CategoryCounts() {
		if n == 0 {
			return core.Invalidf("category %s has no seats: give it rows (%s:A-E) or take it out", v.Categories[i].Code, v.Categories[i].Code)
		}
	}
	return nil
}

// newShowFromForm reads the form into a NewShow; csvPlan says the seats
// came from a CSV file, whose line numbers the error message should use.
// An uploaded plan is kept in d.PlanText for the form's next round.
func (cn *console) newShowFromForm(c echo.Context, d *web.NewShowData) (core.NewShow, bool, error) {
	n := core.NewShow{Name: strings.TrimSpace(d.Name), Venue: strings.TrimSpace(d.Venue), Currency: d.Currency, Draft: d.Draft}
	if d.StartsAt != "" {
		t, err := time.ParseInLocation("2006-01-02T15:04", d.StartsAt, cn.page(c, "", "").Loc)
		if err != nil {
			return n, false, core.Invalidf("starts: %q is not a date and time", d.StartsAt)
		}
		n.StartsAt = t.UTC()
	}
	var (
		csvPlan bool
		err     error
	)
	n.Plan, csvPlan, err = planFromForm(c, d, d.Currency)
	return n, csvPlan, err
}

// planFromForm reads a plan form's categories and seats (a grid, or an
// uploaded CSV or JSON file) into a PlanSpec, prices in currency; csvPlan
// says the seats came from a CSV file. It serves the new show form and
// the edit page's plan form alike.
func planFromForm(c echo.Context, d *web.NewShowData, currency string) (spec core.PlanSpec, csvPlan bool, err error) {
	cats, err := parseCategories(d.Categories, currency)
	if err != nil {
		return spec, false, err
	}
	spec.Categories = cats
	if d.Source != "upload" {
		rows, err1 := strconv.Atoi(d.Rows)
		perRow, err2 := strconv.Atoi(d.PerRow)
		if err := errors.Join(err1, err2); err != nil {
			return spec, false, core.Invalidf("rows and seats per row must be whole numbers")
		}
		spec.Grid = &core.GridSpec{Rows: rows, SeatsPerRow: perRow}
		if !strings.Contains(d.GridCategory, ":") {
			spec.Grid.Category = d.GridCategory
		} else if spec.Grid.RowCategories, err = parseRowCategories(d.GridCategory); err != nil {
			return spec, false, err
		}
		return spec, false, nil
	}
	data, err := uploadedPlan(c)
	if err != nil {
		return spec, false, err
	}
	d.PlanText = string(data)
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '{' {
		var req planRequest
		if err := decodeJSON(data, &req); err != nil {
			return spec, false, err
		}
		uploaded := req.spec()
		if len(uploaded.Categories) == 0 {
			uploaded.Categories = cats
		}
		return uploaded, false, nil
	}
	if spec.Seats, err = parsePlanCSV(string(data)); err != nil {
		return spec, true, err
	}
	return spec, true, nil
}

// uploadedPlan is the plan file chosen, or else the one an earlier round
// of the form (a preview) kept.
func uploadedPlan(c echo.Context) ([]byte, error) {
	var data []byte
	if fh, err := c.FormFile("plan"); err == nil {
		f, err := fh.Open()
		if err != nil {
			return nil, fmt.Errorf("open uploaded plan: %w", err)
		}
		defer f.Close()
		if data, err = io.ReadAll(io.LimitReader(f, maxPlanUpload+1)); err != nil {
			return nil, fmt.Errorf("read uploaded plan: %w", err)
		}
	} else if kept := c.FormValue("plan_text"); kept != "" {
		data = []byte(kept)
	} else {
		return nil, core.Invalidf("choose a plan file to upload")
	}
	if len(data) > maxPlanUpload {
		return nil, core.Invalidf("the plan file is larger than %d MB", maxPlanUpload>>20)
	}
	return data, nil
}

// parseCategories reads "code,name,price" lines, the price in the
// currency's units as staff write it (25.00 EUR, 2500 JPY).
func parseCategories(text, currency string) ([]core.PriceCategory, error) {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = 3
	r.TrimLeadingSpace = true
	var out []core.PriceCategory
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, core.Invalidf("price categories: %s", csvProblem(err))
		}
		line, _ := r.FieldPos(0)
		price, err := core.ParseAmount(rec[2], currency)
		if err != nil {
			return nil, core.Invalidf("price categories line %d: price %v", line, err)
		}
		out = append(out, core.PriceCategory{Code: strings.TrimSpace(rec[0]), Name: strings.TrimSpace(rec[1]), PriceCents: price})
	}
}

// parseRowCategories reads a grid's categories by rows as the map names
// them: "STD:A-E, VIP:F-H, STD:J" (a range or one row, separated by
// commas or spaces).
func parseRowCategories(text string) ([]core.RowCategory, error) {
	var out []core.RowCategory
	for _, part := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' }) {
		code, rows, ok := strings.Cut(part, ":")
		from, to, ranged := strings.Cut(rows, "-")
		if !ranged {
			to = from
		}
		rc := core.RowCategory{Category: code, From: core.RowNumber(strings.ToUpper(from)), To: core.RowNumber(strings.ToUpper(to))}
		if !ok || code == "" || rc.From == 0 || rc.To == 0 {
			return nil, core.Invalidf("categories by row: %q is not CODE:ROW or CODE:FIRST-LAST (STD:A-E)", part)
		}
		out = append(out, rc)
	}
	return out, nil
}

// parsePlanCSV reads a CSV plan: the header section,row,number,category,x,y
// and one seat a line (seat ids are ROW-NUMBER). Errors name the line.
func parsePlanCSV(data string) ([]core.SeatSpec, error) {
	r := csv.NewReader(strings.NewReader(data))
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		return nil, core.Invalidf("the plan file is empty")
	}
	if err != nil {
		return nil, core.Invalidf("plan: %s", csvProblem(err))
	}
	if len(header) != len(csvPlanHeader) || strings.Join(header, ",") != strings.Join(csvPlanHeader, ",") {
		return nil, core.Invalidf("plan line 1: the header must be %s, not %s", strings.Join(csvPlanHeader, ","), strings.Join(header, ","))
	}
	var seats []core.SeatSpec
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return seats, nil
		}
		if err != nil {
			return nil, core.Invalidf("plan: %s", csvProblem(err))
		}
		line, _ := r.FieldPos(0)
		if len(seats) == core.MaxShowSeats {
			return nil, core.Invalidf("plan line %d: more than %d seats", line, core.MaxShowSeats)
		}
		nums := make([]int, 3)
		for i, col := range []int{2, 4, 5} {
			if nums[i], err = strconv.Atoi(strings.TrimSpace(rec[col])); err != nil {
				return nil, core.Invalidf("plan line %d: %s %q is not a whole number", line, csvPlanHeader[col], rec[col])
			}
		}
		seats = append(seats, core.SeatSpec{Section: strings.TrimSpace(rec[0]), Row: strings.TrimSpace(rec[1]),
			Number: nums[0], Category: strings.TrimSpace(rec[3]), X: nums[1], Y: nums[2]})
	}
}

// csvProblem says what encoding/csv found wrong, with its line.
func csvProblem(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return fmt.Sprintf("line %d: wrong number of fields", pe.Line)
		}
		return fmt.Sprintf("line %d: %v", pe.Line, pe.Err)
	}
	return err.Error()
}

var seatIndex = regexp.MustCompile(`seats\[(\d+)\]`)

// csvLine is the line of seats[i] in a CSV plan (the header is line 1).
func csvLine(index string) string {
	i, _ := strconv.Atoi(index)
	return "line " + strconv.Itoa(i+2)
}

// planMessage is the form's error text; for a CSV plan a seat's index
// becomes its line in the file.
func planMessage(err error, csvPlan bool) string {
	var ce *core.Error
	if !errors.As(err, &ce) {
		return err.Error()
	}
	m := seatIndex.FindStringSubmatch(ce.Field)
	if !csvPlan || m == nil {
		return ce.Message
	}
	text := seatIndex.ReplaceAllStringFunc(strings.TrimPrefix(ce.Message, ce.Field+": "),
		func(s string) string { return csvLine(seatIndex.FindStringSubmatch(s)[1]) })
	return "plan " + csvLine(m[1]) + ": " + text
}

// blockSeats and unblockSeats take seats off public sale and back, from
// the seat panel's form, then show the map again.
func (cn *console) blockSeats(c echo.Context) error   { return cn.changeBlocks(c, true) }
func (cn *console) unblockSeats(c echo.Context) error { return cn.changeBlocks(c, false) }

func (cn *console) changeBlocks(c echo.Context, block bool) error {
	id, err := positiveID(c.Param("id"))
	if err != nil {
		return echo.ErrNotFound
	}
	ids := seatIDList(c.FormValue("seat_ids"))
	r := core.BlockRequest{ShowID: id, SeatIDs: ids, Reason: c.FormValue("reason")}
	action, msg := core.AuditSeatsBlock, "seats_blocked"
	if block {
		err = cn.Engine.BlockSeats(c.Request().Context(), r)
	} else {
		action, msg = core.AuditSeatsUnblock, "seats_unblocked"
		err = cn.Engine.UnblockSeats(c.Request().Context(), r)
	}
	if err != nil {
		return err
	}
	cn.audit(c, core.AuditEntry{Action: action, Target: "show:" + strconv.FormatInt(id, 10),
		Detail: map[string]any{"seat_ids": ids, "reason": r.Reason}})
	return c.Redirect(http.StatusSeeOther, web.URL(fmt.Sprintf("/shows/%d?msg=%s", id, msg)))
}
