package server

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"reflect"
	"strings"

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
