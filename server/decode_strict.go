package server

import (
	"encoding/json"
	"mime"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"unicode/utf8"

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
// and a key that matches a field only when case is ignored. body is one
// value encoding/json has already decoded (decodeJSON), so it is valid
// JSON: the walk is a plain scan of its bytes, where json.Decoder's tokens
// cost an allocation each, most of a placement's decoding.
func checkKeys(body []byte, t reflect.Type) error {
	k := keyScan{b: body}
	return k.value(t)
}

// keyScan is a position in a body of valid JSON.
type keyScan struct {
	b []byte
	i int
}

func (k *keyScan) space() {
	for k.i < len(k.b) && (k.b[k.i] == ' ' || k.b[k.i] == '\t' || k.b[k.i] == '\n' || k.b[k.i] == '\r') {
		k.i++
	}
}

// next skips white space and returns the byte there, consuming it.
func (k *keyScan) next() byte {
	k.space()
	c := k.b[k.i]
	k.i++
	return c
}

func (k *keyScan) value(t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch k.next() {
	case '{':
		return k.object(t)
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		if k.space(); k.b[k.i] == ']' {
			k.i++
			return nil
		}
		for {
			if err := k.value(elem); err != nil {
				return err
			}
			if k.next() == ']' {
				return nil
			}
		}
	case '"':
		k.string()
	default: // the rest of a number, true, false or null
		for k.i < len(k.b) && !strings.ContainsRune(",]} \t\n\r", rune(k.b[k.i])) {
			k.i++
		}
	}
	return nil
}

// string skips the rest of a string whose opening quote is consumed and
// returns it as sent, quotes included.
func (k *keyScan) string() []byte {
	from := k.i - 1
	for k.b[k.i] != '"' {
		if k.b[k.i] == '\\' {
			k.i++
		}
		k.i++
	}
	k.i++
	return k.b[from:k.i]
}

func (k *keyScan) object(t reflect.Type) error {
	var fields map[string]reflect.Type
	if t != nil && t.Kind() == reflect.Struct {
		fields = jsonFieldsOf(t)
	}
	if k.space(); k.b[k.i] == '}' {
		k.i++
		return nil
	}
	var seen map[string]string // lower-cased key → key as sent
	for {
		k.next() // the key's opening quote
		key := unquoteKey(k.string())
		lower := strings.ToLower(key)
		if prev, dup := seen[lower]; dup {
			if prev == key {
				return core.Invalidf("duplicate key %q", key)
			}
			return core.Invalidf("keys %q and %q differ only in case", prev, key)
		}
		if seen == nil {
			seen = map[string]string{}
		}
		seen[lower] = key
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
		k.next() // ':'
		if err := k.value(ft); err != nil {
			return err
		}
		if k.next() == '}' {
			return nil
		}
	}
}

// unquoteKey is a quoted key as encoding/json reads it: a plain one is its
// bytes; escapes and non-ASCII bytes (invalid UTF-8 becomes U+FFFD) are
// left to encoding/json.
func unquoteKey(q []byte) string {
	plain := true
	for _, c := range q {
		if c == '\\' || c >= utf8.RuneSelf {
			plain = false
			break
		}
	}
	if plain {
		return string(q[1 : len(q)-1])
	}
	var key string
	_ = json.Unmarshal(q, &key)
	return key
}

// fieldTypes caches jsonFields per struct type: requests decode the same
// few types, and reflection over their fields on each was not free.
var fieldTypes sync.Map // reflect.Type → map[string]reflect.Type

func jsonFieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldTypes.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	f := jsonFields(t, map[string]reflect.Type{})
	fieldTypes.Store(t, f)
	return f
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
