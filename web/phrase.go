package web

import (
	"strings"
	"time"

	"seatflow/core"
)

// Say says phrases in the page's language, joined as one detail. A phrase
// the catalog does not know (a run recorded by a newer version) gives the
// English fallback whole, never a bare key.
func (p Page) Say(phrases []core.Phrase, fallback string) string {
	if len(phrases) == 0 {
		return fallback
	}
	out := make([]string, len(phrases))
	for i, ph := range phrases {
		if _, ok := catalog[ph.Key]; !ok {
			return fallback
		}
		args := make([]any, len(ph.Args))
		for k, a := range ph.Args {
			args[k] = p.phraseArg(a)
		}
		out[i] = p.Tf(ph.Key, args...)
	}
	sep := "; "
	if p.Lang == LangZH {
		sep = "；"
	}
	return strings.Join(out, sep)
}

func (p Page) phraseArg(a core.PhraseArg) string {
	switch {
	case a.MS != nil:
		return p.Duration(time.Duration(*a.MS) * time.Millisecond)
	case a.At != nil:
		return p.Time(time.UnixMilli(*a.At))
	case a.Word != "":
		return TranslateOr(p.Lang, a.Word, a.Word[strings.LastIndex(a.Word, ".")+1:])
	}
	return a.Text
}
