package web

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"seatflow/core"
)

func TestSay(t *testing.T) {
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	en := Page{Lang: LangEN, Loc: tokyo}
	zh := Page{Lang: LangZH, Loc: tokyo}
	expired := core.Say("reconcile.note.expired", core.ArgDuration(90*time.Second))
	tests := []struct {
		name     string
		p        Page
		phrases  []core.Phrase
		fallback string
		want     string
	}{
		{"a duration in English", en, []core.Phrase{expired}, "x", "pending 1 min 30 s past its expiry"},
		{"a duration in Chinese", zh, []core.Phrase{expired}, "x", "已过期 1 分 30 秒 仍待支付"},
		{"a word in Chinese", zh, []core.Phrase{core.Say("reconcile.note.orphan", core.ArgWord("status.cancelled"))}, "x", "订单已取消"},
		{"a word the catalog lacks says its last part", en, []core.Phrase{core.Say("reconcile.note.orphan", core.ArgWord("status.someday"))}, "x", "the order is someday"},
		{"a time in the reader's zone", en, []core.Phrase{core.Say("reconcile.note.unsent", core.ArgText("2"), core.ArgTime(at))}, "x",
			"hop 2 unsent since " + en.Time(at)},
		{"two sentences in Chinese", zh, []core.Phrase{core.Say("reconcile.note.relock"), core.Say("reconcile.note.relock_taken")}, "x",
			"待支付订单的座位未在座位存储中锁定；期间已被其他订单锁定：留待下次对账"},
		{"no phrases: the English detail", zh, nil, "seat store shows A-1 available", "seat store shows A-1 available"},
		{"an unknown key: the English detail whole", zh, []core.Phrase{expired, core.Say("reconcile.note.from_the_future")}, "english", "english"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.p.Say(tt.phrases, tt.fallback); got != tt.want {
				t.Errorf("Say = %q, want %q", got, tt.want)
			}
		})
	}
	if !strings.Contains(en.Time(at), "21:00") {
		t.Errorf("time %q not in Tokyo", en.Time(at))
	}
}

// TestCatalogCoversReconcileNotes reads core/reconcile for every phrase it
// says: each key must be in the catalog in both languages with one %s per
// value, and each word it names must be there too.
func TestCatalogCoversReconcileNotes(t *testing.T) {
	files, err := filepath.Glob("../core/reconcile/*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	says := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			key, _ := strconv.Unquote(lit.Value)
			at := fset.Position(call.Pos())
			switch sel.Sel.Name {
			case "Say":
				says++
				e, ok := catalog[key]
				if !ok || e.en == "" || e.zh == "" {
					t.Errorf("%s: %q is not in the catalog in both languages", at, key)
					return true
				}
				for lang, s := range map[string]string{"en": e.en, "zh": e.zh} {
					if n := strings.Count(s, "%s"); n != len(call.Args)-1 {
						t.Errorf("%s: %q in %s has %d %%s for %d values", at, key, lang, n, len(call.Args)-1)
					}
				}
			case "ArgWord":
				if e, ok := catalog[key]; !ok || e.en == "" || e.zh == "" {
					t.Errorf("%s: word %q is not in the catalog in both languages", at, key)
				}
			}
			return true
		})
	}
	if says < 20 {
		t.Errorf("found %d phrases in core/reconcile, want the 20 or more it says", says)
	}
}
