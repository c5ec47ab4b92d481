package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"reflect"
	"strings"

	"github.com/labstack/echo/v4"

	"seatflow/core"
)

// readBody reads the whole request body; the body-limit middleware has
// already bounded it, and its 413 error passes through unchanged.
func readBody(c echo.Context) ([]byte, error) {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return nil, he
		}
		return nil, &core.Error{Kind: core.KindInvalid, Code: core.ErrInvalid.Code,
			Message: "could not read the request body", Err: err}
	}
	return body, nil
}

// decodeJSON decodes exactly one JSON object into v (a pointer to a struct
// with json tags), rejecting unknown fields, duplicate keys and keys that
// match a field only when case is ignored, and turns every decoding
// failure into an invalid_request error a client can act on. Free text is
// left as sent: text.Check refuses what it must not hold, naming the
// field, rather than storing something else than the client sent.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) && strings.HasPrefix(te.Value, "number ") {
		// Only a number refused for its field pays for the rewrite: a
		// whole one written as 841.0 decodes again, as an integer.
		if whole := wholeNumbers(body); !bytes.Equal(whole, body) {
			reflect.ValueOf(v).Elem().SetZero()
			dec = json.NewDecoder(bytes.NewReader(whole))
			dec.DisallowUnknownFields()
			err = dec.Decode(v)
		}
	}
	if err != nil {
		return jsonError(err, v)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return core.Invalidf("request body must hold exactly one JSON object")
	}
	if err := checkKeys(body, reflect.TypeOf(v)); err != nil {
		return err
	}
	return nil
}

// wholeNumbers rewrites numbers written with a fraction or an exponent
// whose value is whole (841.0, 8.41e2) as integers: the document's
// "integer" admits them (JSON Schema counts 841.0 as one), and
// encoding/json refuses them for an int field. A body that does not parse,
// holds more than one value, or has no such number is returned unchanged,
// for decodeJSON to refuse in its own words. Long literals and large
// exponents are left alone: exact arithmetic on 1e999999999 would be a
// way to make the server work hard.
func wholeNumbers(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return body
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return body
	}
	changed := false
	v = rewriteWhole(v, &changed)
	if !changed {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

func rewriteWhole(v any, changed *bool) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = rewriteWhole(e, changed)
		}
	case []any:
		for i, e := range x {
			x[i] = rewriteWhole(e, changed)
		}
	case json.Number:
		s := strings.ToLower(string(x))
		if _, exp, _ := strings.Cut(s, "e"); len(s) > 40 || len(strings.TrimLeft(exp, "+-")) > 3 || !strings.ContainsAny(s, ".e") {
			return v
		}
		if r, ok := new(big.Rat).SetString(s); ok && r.IsInt() && r.Num().IsInt64() {
			*changed = true
			return json.Number(r.Num().String())
		}
	}
	return v
}

func jsonError(err error, v any) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
	)
	switch {
	case errors.Is(err, io.EOF):
		return core.Invalidf("request body is empty; want a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return core.Invalidf("request body is truncated JSON")
	case errors.As(err, &syntax):
		return core.Invalidf("malformed JSON at byte %d", syntax.Offset)
	case errors.As(err, &typ) && typ.Field == "":
		return core.Invalidf("request body must be a JSON object")
	case errors.As(err, &typ):
		return core.Invalidf("%s must be %s", typ.Field, describeField(v, typ.Field))
	}
	// Unknown fields have no error type in encoding/json; its message
	// ("json: unknown field \"x\"") is already clear.
	return core.Invalidf("invalid JSON body: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// describeField names the JSON type of v's field tagged name, in words.
func describeField(v any, name string) string {
	t := reflect.TypeOf(v).Elem()
	for i := range t.NumField() {
		f := t.Field(i)
		if tag, _, _ := strings.Cut(f.Tag.Get("json"), ","); tag == name {
			return describeType(f.Type)
		}
	}
	return "of another type"
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int32, reflect.Int64:
		// Every integer in this API is an id or an amount.
		return "a positive integer"
	case reflect.String:
		return "a string"
	case reflect.Slice:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(describeType(t.Elem()), "a "), "an ") + "s"
	}
	return fmt.Sprintf("a JSON %s", t.Kind())
}
