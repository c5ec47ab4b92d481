// Package text is the one check of free text people type for other people
// to read (show names, plan labels, reasons, notes, key names), shared by
// core and access.
package text

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"seatflow/core/fault"
)

// Form says what a free-text field may hold besides visible text.
type Form int

const (
	// OneLine: names and labels (a show, a venue, a section, a row, a key).
	// They end up in one-line places — an event stream's data line, a CSV
	// cell, a log line, a table cell — so no control character at all.
	OneLine Form = iota
	// MultiLine: notes and reasons staff write in a text area. Line breaks
	// and tabs are kept; a browser sends a text area's breaks as CRLF, so
	// CRLF and a lone CR become LF.
	MultiLine
)

// ErrInvalid is the code of every refusal of Check; the error's
// Field names the field.
var ErrInvalid = &fault.Error{Kind: fault.KindInvalid, Code: "invalid_text", Message: "text holds a control or invisible character"}

// Check is the one check of free text people type for other people to
// read. It refuses, rather than strips, what would make the text lie or
// break where it is shown: text that is not UTF-8, control characters
// (C0, DEL, C1; see Form for line breaks), line and paragraph
// separators, bidirectional overrides, embeddings, isolates and marks
// (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C: "refund 100"
// displayed as "001 dnufer"), and the other invisible format characters
// (zero-width spaces, the BOM, tag characters, Hangul fillers: two names
// that look alike but differ). Refusing lets the person who typed it see
// and fix it; stripping would store something else than they sent. The
// joiners U+200C/U+200D and variation selectors stay: scripts such as
// Persian and emoji sequences need them. It returns s with MultiLine's
// line breaks normalized.
func Check(field, s string, form Form) (string, error) {
	if !utf8.ValidString(s) {
		return "", &fault.Error{Kind: fault.KindInvalid, Code: ErrInvalid.Code, Field: field,
			Message: field + ": is not valid UTF-8", Err: &Refusal{Char: utf8.RuneError}}
	}
	if form == MultiLine && strings.Contains(s, "\r") {
		s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	}
	for i, r := range []rune(s) {
		if form == MultiLine && (r == '\n' || r == '\t') || !forbiddenInText(r) {
			continue
		}
		hint := "a name or label is one line of visible text"
		if form == MultiLine {
			hint = "besides visible text only line breaks and tabs are allowed"
		}
		return "", &fault.Error{Kind: fault.KindInvalid, Code: ErrInvalid.Code, Field: field,
			Message: fmt.Sprintf("%s: character %d is %s, a control or invisible character; remove it (%s)",
				field, i+1, CodePoint(r), hint),
			Err: &Refusal{Pos: i + 1, Char: r}}
	}
	return s, nil
}

// Refusal is the character Check refused and its position (from 1;
// 0 with utf8.RuneError for text that is not UTF-8), for a form to show.
type Refusal struct {
	Pos  int
	Char rune
}

func (t *Refusal) Error() string {
	return fmt.Sprintf("%s at character %d", CodePoint(t.Char), t.Pos)
}

// CodePoint is r as U+XXXX, how a refusal names an invisible character.
func CodePoint(r rune) string { return fmt.Sprintf("U+%04X", r) }

func forbiddenInText(r rune) bool {
	switch {
	case r == '\u200c' || r == '\u200d' || unicode.Is(unicode.Variation_Selector, r):
		return false
	case unicode.IsControl(r), // Cc: C0, DEL, C1
		unicode.In(r, unicode.Zl, unicode.Zp, unicode.Cf), // separators; format: bidi, zero-width, BOM, tags
		unicode.Is(unicode.Bidi_Control, r),
		unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r): // Hangul fillers, U+034F, …
		return true
	}
	return false
}
