package server

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"seatflow/core/text"
)

// textClass is a regexp character class of the runes text.Check refuses in
// form, plus the extra runes, as ranges of literal characters.
func textClass(form text.Form, extra func(rune) bool) string {
	var b strings.Builder
	lo := rune(-1)
	flush := func(hi rune) {
		if lo < 0 {
			return
		}
		b.WriteRune(lo)
		if hi > lo {
			b.WriteString("-")
			b.WriteRune(hi)
		}
		lo = -1
	}
	for r := rune(0); r <= unicode.MaxRune+1; r++ {
		refused := false
		if r <= unicode.MaxRune && (r < 0xD800 || r > 0xDFFF) {
			_, err := text.Check("f", string(r), form)
			refused = err != nil || extra(r)
		}
		switch {
		case refused && lo < 0:
			lo = r
		case !refused && lo >= 0:
			flush(r - 1)
		}
	}
	return b.String()
}

// The document's patterns for free text refuse exactly what text.Check
// refuses, so a client (and schemathesis) can tell valid text from
// invalid_text before sending it.
func TestOpenAPITextPatterns(t *testing.T) {
	none := func(rune) bool { return false }
	oneLine := "^[^" + textClass(text.OneLine, none) + "]*$"
	multi := textClass(text.MultiLine, none)
	multiLine := "^[^" + multi + "]*$"
	// The refund's reason is trimmed (strings.TrimSpace) and must not be empty.
	nonBlank := "^[^" + multi + "]*[^" + textClass(text.MultiLine, unicode.IsSpace) + "][^" + multi + "]*$"

	var doc map[string]any
	if err := json.Unmarshal(openAPIDocument, &doc); err != nil {
		t.Fatal(err)
	}
	at := func(path ...string) any {
		var v any = doc
		for _, p := range path {
			v = v.(map[string]any)[p]
		}
		return v
	}
	seat := func(req, field string) []string {
		return []string{"components", "schemas", req, "properties", "seats", "items", "properties", field, "pattern"}
	}
	prop := func(req, field string) []string {
		return []string{"components", "schemas", req, "properties", field, "pattern"}
	}
	for _, tc := range []struct {
		path []string
		want string
	}{
		{prop("CreateShowRequest", "name"), oneLine},
		{prop("CreateShowRequest", "venue"), oneLine},
		{prop("EditShowRequest", "name"), oneLine},
		{prop("EditShowRequest", "venue"), oneLine},
		{prop("PriceCategory", "name"), oneLine},
		{seat("CreateShowRequest", "section"), oneLine},
		{seat("CreateShowRequest", "row"), oneLine},
		{seat("PlanRequest", "section"), oneLine},
		{seat("PlanRequest", "row"), oneLine},
		{prop("ExtendOrderRequest", "reason"), multiLine},
		{prop("RefundOrderRequest", "reason"), nonBlank},
		{prop("RefundOrderRequest", "reference"), oneLine},
		{prop("CheckinRequest", "gate"), oneLine},
	} {
		name := strings.Join(tc.path[2:], ".")
		got, _ := at(tc.path...).(string)
		if got != tc.want {
			t.Errorf("%s: pattern\n%+q\nwant\n%+q", name, got, tc.want)
		}
	}
}
