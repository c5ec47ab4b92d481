package server

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"unicode"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// errUnsupportedMediaType answers a body that is not declared JSON: a form
// or text/plain post must not be read as JSON (a cross-site form can send
// text/plain without a preflight).
var errUnsupportedMediaType = echo.NewHTTPError(http.StatusUnsupportedMediaType)

// requireJSONType refuses a non-empty body whose Content-Type is not
// application/json.
func requireJSONType(c echo.Context, body []byte) error {
	if len(body) == 0 {
		return nil
	}
	mt, _, err := mime.ParseMediaType(c.Request().Header.Get(echo.HeaderContentType))
	if err != nil || mt != echo.MIMEApplicationJSON {
		return errUnsupportedMediaType
	}
	return nil
}

// checkKeys walks the JSON value in body beside the Go type t and refuses
// what encoding/json silently accepts: a key given twice (the last would
// win, so a signature check or a proxy may see another value than we do)
// and a key that matches a field only when case is ignored. Syntax errors
// are left to the decoder, which words them better.
func checkKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	err := walkValue(dec, t)
	if _, ok := err.(*core.Error); ok {
		return err
	}
	return nil
}

func walkValue(dec *json.Decoder, t reflect.Type) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch tok {
	case json.Delim('{'):
		return walkObject(dec, t)
	case json.Delim('['):
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for dec.More() {
			if err := walkValue(dec, elem); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	return nil
}

func walkObject(dec *json.Decoder, t reflect.Type) error {
	var fields map[string]reflect.Type
	if t != nil && t.Kind() == reflect.Struct {
		fields = jsonFields(t, map[string]reflect.Type{})
	}
	seen := map[string]string{} // lower-cased key → key as sent
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		if prev, dup := seen[strings.ToLower(key)]; dup {
			if prev == key {
				return core.Invalidf("duplicate key %q", key)
			}
			return core.Invalidf("keys %q and %q differ only in case", prev, key)
		}
		seen[strings.ToLower(key)] = key
		var ft reflect.Type
		if fields != nil {
			var ok bool
			if ft, ok = fields[key]; !ok {
				for name := range fields {
					if strings.EqualFold(name, key) {
						return core.Invalidf("unknown field %q (keys are case-sensitive: %q)", key, name)
					}
				}
			}
		} else if t != nil && t.Kind() == reflect.Map {
			ft = t.Elem()
		}
		if err := walkValue(dec, ft); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// jsonFields maps the JSON names of t's fields (embedded structs included,
// as encoding/json flattens them) to their types.
func jsonFields(t reflect.Type, into map[string]reflect.Type) map[string]reflect.Type {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || !f.IsExported() && !f.Anonymous:
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			jsonFields(f.Type, into)
		case tag == "":
			into[f.Name] = f.Type
		default:
			into[tag] = f.Type
		}
	}
	return into
}

// stripFreeText removes control characters (C0, C1) and bidirectional
// formatting characters from every string field of v tagged text:"free":
// people's prose (reasons, show names) that staff read later, where an
// override could make "refund 100" display as "001 dnufer". Identifiers are
// not stripped; their own checks refuse such characters.
func stripFreeText(v any) {
	stripValue(reflect.ValueOf(v))
}

func stripValue(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			stripValue(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			stripValue(v.Index(i))
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			switch {
			case !f.IsExported():
			case f.Type.Kind() == reflect.String && f.Tag.Get("text") == "free":
				v.Field(i).SetString(cleanText(v.Field(i).String()))
			default:
				stripValue(v.Field(i))
			}
		}
	}
}

// cleanText drops C0/C1 controls and bidi overrides, embeddings and isolates
// (U+202A–U+202E, U+2066–U+2069, and the marks U+200E/U+200F, U+061C).
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, s)
}
