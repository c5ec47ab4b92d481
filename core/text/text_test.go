package text_test

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"seatflow/core"
	"seatflow/core/access"
	"seatflow/core/text"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		form     text.Form
		want     string // the stored form; "" when refused
		refused  rune   // the character named in the refusal
	}{
		{"plain", "Gala night", text.OneLine, "Gala night", 0},
		{"accents and emoji", "Grüße 🎟 Oper", text.OneLine, "Grüße 🎟 Oper", 0},
		{"right-to-left script", "תיאטרון הבימה", text.OneLine, "תיאטרון הבימה", 0},
		{"persian with a non-joiner", "می\u200cخواهم", text.OneLine, "می\u200cخواهم", 0},
		{"emoji sequence with a joiner", "👩\u200d👩\u200d👧 family", text.OneLine, "👩\u200d👩\u200d👧 family", 0},
		{"emoji presentation selector", "❤\ufe0f", text.OneLine, "❤\ufe0f", 0},
		{"carriage return in a label", "A\r", text.OneLine, "", '\r'},
		{"newline in a name", "Gala\nnight", text.OneLine, "", '\n'},
		{"tab in a name", "Gala\tnight", text.OneLine, "", '\t'},
		{"NUL", "a\x00b", text.OneLine, "", 0},
		{"escape", "a\x1b[31mb", text.OneLine, "", 0x1b},
		{"DEL", "a\x7f", text.OneLine, "", 0x7f},
		{"C1 next line", "a\u0085b", text.OneLine, "", 0x85},
		{"C1 CSI", "a\u009bb", text.OneLine, "", 0x9b},
		{"right-to-left override", "refund \u202e001", text.OneLine, "", 0x202e},
		{"left-to-right embedding", "\u202aa", text.OneLine, "", 0x202a},
		{"pop directional formatting", "a\u202c", text.OneLine, "", 0x202c},
		{"first strong isolate", "\u2068a\u2069", text.OneLine, "", 0x2068},
		{"right-to-left mark", "a\u200f", text.OneLine, "", 0x200f},
		{"arabic letter mark", "a\u061c", text.OneLine, "", 0x61c},
		{"zero-width space", "Ga\u200bla", text.OneLine, "", 0x200b},
		{"word joiner", "Ga\u2060la", text.OneLine, "", 0x2060},
		{"byte order mark", "\ufeffGala", text.OneLine, "", 0xfeff},
		{"soft hyphen", "Ga\u00adla", text.OneLine, "", 0xad},
		{"tag character", "Gala\U000E0041", text.OneLine, "", 0xe0041},
		{"hangul filler", "\u3164", text.OneLine, "", 0x3164},
		{"line separator", "a\u2028b", text.OneLine, "", 0x2028},
		{"paragraph separator in a note", "a\u2029b", text.MultiLine, "", 0x2029},
		{"note with lines and a tab", "line 1\n\tline 2", text.MultiLine, "line 1\n\tline 2", 0},
		{"note from a text area (CRLF)", "line 1\r\nline 2", text.MultiLine, "line 1\nline 2", 0},
		{"note with a lone CR", "line 1\rline 2", text.MultiLine, "line 1\nline 2", 0},
		{"note with an escape", "paid\x1b[2K", text.MultiLine, "", 0x1b},
		{"note with an override", "refund \u202e001", text.MultiLine, "", 0x202e},
		{"not UTF-8", "Gala\xff", text.OneLine, "", utf8.RuneError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := text.Check("name", tc.in, tc.form)
			if tc.want != "" {
				if err != nil || got != tc.want {
					t.Fatalf("Check(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
				}
				return
			}
			var ce *core.Error
			var tr *text.Refusal
			if !errors.As(err, &ce) || ce.Code != "invalid_text" || ce.Field != "name" || ce.Kind != core.KindInvalid ||
				!strings.HasPrefix(ce.Message, "name: ") {
				t.Fatalf("Check(%q) = %q, %v; want invalid_text naming the field", tc.in, got, err)
			}
			if !errors.As(err, &tr) || tr.Char != tc.refused {
				t.Errorf("refusal %v, want it to name %s", err, text.CodePoint(tc.refused))
			}
			if tc.refused != utf8.RuneError && !strings.Contains(ce.Message, text.CodePoint(tc.refused)) {
				t.Errorf("message %q does not name %s", ce.Message, text.CodePoint(tc.refused))
			}
		})
	}
}

// FuzzCheck: whatever Check accepts is UTF-8 with no control,
// bidi or invisible format character (line breaks and tabs in multi-line
// text only), accepted again unchanged; what it refuses is invalid_text.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{"Gala", "A\r", "a\r\nb", "\u202e001", "\u2066x\u2069", "a\u200bb", "👩\u200d👧", "\xff", "a\u0085"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, multi bool) {
		form := text.OneLine
		if multi {
			form = text.MultiLine
		}
		got, err := text.Check("f", s, form)
		if err != nil {
			if !errors.Is(err, text.ErrInvalid) || core.ErrorKind(err) != core.KindInvalid {
				t.Fatalf("refusal %v is not invalid_text", err)
			}
			return
		}
		if !utf8.ValidString(got) {
			t.Fatalf("accepted %q: not UTF-8", got)
		}
		for _, r := range got {
			if multi && (r == '\n' || r == '\t') {
				continue
			}
			if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) ||
				unicode.In(r, unicode.Zl, unicode.Zp) || unicode.Is(unicode.Cf, r) && r != '\u200c' && r != '\u200d' {
				t.Fatalf("accepted %q with %s", got, text.CodePoint(r))
			}
		}
		if again, err := text.Check("f", got, form); err != nil || again != got {
			t.Fatalf("not stable: %q became %q, %v", got, again, err)
		}
	})
}

// The show and plan checks and the API key name refuse through text.Check,
// naming the field; the same show with clean text is accepted.
func TestShowTextFields(t *testing.T) {
	show := func(edit func(*core.NewShow)) core.NewShow {
		n := core.NewShow{Name: "Gala", Venue: "Hall", StartsAt: time.Date(2030, 1, 2, 19, 30, 0, 0, time.UTC), Currency: "EUR",
			Plan: core.PlanSpec{Categories: []core.PriceCategory{{Code: "STD", Name: "Standard", PriceCents: 1000}},
				Seats: []core.SeatSpec{{SeatID: "A-1", Section: "Stalls", Row: "A", Number: 1, Category: "STD"}}}}
		edit(&n)
		return n
	}
	if _, _, err := core.PreviewShow(show(func(*core.NewShow) {})); err != nil {
		t.Fatalf("clean show refused: %v", err)
	}
	for _, tc := range []struct {
		field string
		edit  func(*core.NewShow)
	}{
		{"name", func(n *core.NewShow) { n.Name = "Gala\r" }},
		{"venue", func(n *core.NewShow) { n.Venue = "\u202eHall" }},
		{"price_categories[0].name", func(n *core.NewShow) { n.Plan.Categories[0].Name = "Std\u2060" }},
		{"seats[0].section", func(n *core.NewShow) { n.Plan.Seats[0].Section = "Stalls\n" }},
		{"seats[0].row", func(n *core.NewShow) { n.Plan.Seats[0].Row = "A\r" }},
	} {
		_, _, err := core.PreviewShow(show(tc.edit))
		var ce *core.Error
		if !errors.As(err, &ce) || ce.Code != text.ErrInvalid.Code || ce.Field != tc.field {
			t.Errorf("%s: %v, want invalid_text naming it", tc.field, err)
		}
	}
	if err := access.ValidAPIKeyName("front \u202eend"); !errors.Is(err, text.ErrInvalid) {
		t.Errorf("API key name with an override: %v, want invalid_text", err)
	}
}
