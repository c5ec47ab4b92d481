package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// apiContract is openapi.json loaded, validated and routed once per test
// binary: every API call a test makes through testApp.do is checked
// against it (checkContract).
var apiContract = sync.OnceValues(func() (routers.Router, error) {
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	if err != nil {
		return nil, err
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, err
	}
	return gorillamux.NewRouter(doc)
})

func contractRouter(t testing.TB) routers.Router {
	t.Helper()
	r, err := apiContract()
	if err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return r
}

// documentAuth admits what has the credential a security scheme names;
// whether it is the right one is the server's business.
func documentAuth(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header
	switch in.SecuritySchemeName {
	case "apiKey":
		scheme, key, _ := strings.Cut(h.Get("Authorization"), " ")
		if strings.EqualFold(scheme, "Bearer") && strings.TrimSpace(key) != "" {
			return nil
		}
	case "paymentSignature":
		if h.Get(headerSignature) != "" {
			return nil
		}
	}
	return errors.New("no " + in.SecuritySchemeName + " credential")
}

// checkContract validates one API exchange against the document: the
// response must match (status documented for the operation, body, content
// type), and a request the document refuses (tests send many on purpose)
// must not be a server error. The server may accept a little more than the
// document promises (spaces around show_id, say): clients must not rely
// on that, so it is no failure. Paths and methods the document lacks are TestOpenAPIRoutes'
// business (the router's own 404 and 405 are not operations).
func checkContract(t testing.TB, req *http.Request, body string, status int, header http.Header, respBody []byte) {
	t.Helper()
	r := req.Clone(context.WithoutCancel(req.Context()))
	r.Body = io.NopCloser(strings.NewReader(body))
	route, params, err := contractRouter(t).FindRoute(r)
	if err != nil {
		return
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: documentAuth}}
	reqErr := openapi3filter.ValidateRequest(r.Context(), in)
	if reqErr != nil && status >= 500 {
		t.Errorf("contract: %s %s: the document refuses the request (%v), the server answered %d %s",
			req.Method, req.URL, reqErr, status, respBody)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status,
		Header: header, Body: io.NopCloser(bytes.NewReader(respBody)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true}}
	if err := openapi3filter.ValidateResponse(r.Context(), out); err != nil {
		t.Errorf("contract: %s %s: response %d does not match the document: %v\nbody: %s",
			req.Method, req.URL, status, err, respBody)
	}
}

// documentPath turns an echo route path into the document's: /api/v1 is
// its server URL, :name its {name}.
func documentPath(echoPath string) string {
	parts := strings.Split(strings.TrimPrefix(echoPath, "/api/v1"), "/")
	for i, p := range parts {
		if name, ok := strings.CutPrefix(p, ":"); ok {
			parts[i] = "{" + name + "}"
		}
	}
	return strings.Join(parts, "/")
}

// Every /api/v1 route is in the document with the scope it needs, and
// every operation of the document is a route: adding one on one side only
// fails here.
func TestOpenAPIRoutes(t *testing.T) {
	a := newTestApp(t)
	doc, err := openapi3.NewLoader().LoadFromData(openAPIDocument)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]*openapi3.Operation{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			documented[method+" "+path] = op
		}
	}
	registered := map[string]bool{}
	for _, r := range a.app.Handler.echo.Routes() {
		if !strings.HasPrefix(r.Path, "/api/v1/") || !countedMethod(r.Method) {
			continue
		}
		key := r.Method + " " + documentPath(r.Path)
		registered[key] = true
		op, ok := documented[key]
		if !ok {
			t.Errorf("route %s %s is not in openapi.json", r.Method, r.Path)
			continue
		}
		// The document's security says what apiKeyAuth enforces.
		var want []string
		if scope, keyed := routeScopes[r.Method+" "+r.Path]; keyed {
			want = []string{string(scope)}
		}
		var got []string
		if op.Security != nil {
			for _, req := range *op.Security {
				got = append(got, req["apiKey"]...)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: the document asks for scopes %v, the server for %v", key, got, want)
		}
		// The answers the middleware gives any route of its kind.
		var statuses []int
		if want != nil {
			statuses = append(statuses, 401, 403, 429, 503) // apiKeyAuth, abuse limits, deadline
		}
		if op.RequestBody != nil {
			statuses = append(statuses, 400, 413, 415) // bindJSON, BodyLimit
		}
		for _, status := range statuses {
			if op.Responses.Status(status) == nil {
				t.Errorf("%s: the document has no %d response", key, status)
			}
		}
	}
	for key := range documented {
		if !registered[key] {
			t.Errorf("openapi.json documents %s, which is not a route", key)
		}
	}
}

// The document is served as committed, with no key.
func TestOpenAPIServed(t *testing.T) {
	a := newTestApp(t)
	rec := a.do("GET", "/api/v1/openapi.json", "", "Authorization", "")
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), openAPIDocument) {
		t.Fatalf("status %d, %d bytes; want 200 and the %d bytes of openapi.json", rec.Code, rec.Body.Len(), len(openAPIDocument))
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q", ct)
	}
	if _, err := apiContract(); err != nil {
		t.Fatalf("openapi.json is not a valid OpenAPI document: %v", err)
	}
}
