package core

import "time"

// Phrase is a sentence for staff to read, kept as a message key and its
// values so that each reader sees it in their own language (the console's
// catalog has the key). Whoever makes one keeps an English text beside it
// for logs and the command line.
type Phrase struct {
	Key  string      `json:"key"`
	Args []PhraseArg `json:"args,omitempty"`
}

// PhraseArg is one value of a Phrase, exactly one of: text said as it is
// (seat ids, numbers), a catalog key of a word the reader's language has
// its own for (an order state, a block reason), a duration or a time.
type PhraseArg struct {
	Text string `json:"text,omitempty"`
	Word string `json:"word,omitempty"`
	MS   *int64 `json:"ms,omitempty"` // a duration, in milliseconds
	At   *int64 `json:"at,omitempty"` // a time, unix milliseconds
}

// Say is the phrase key with args.
func Say(key string, args ...PhraseArg) Phrase { return Phrase{Key: key, Args: args} }

// ArgText is a value said as it is.
func ArgText(s string) PhraseArg { return PhraseArg{Text: s} }

// ArgWord is a word the reader's catalog translates: key names it there.
func ArgWord(key string) PhraseArg { return PhraseArg{Word: key} }

// ArgDuration is a duration, said in the reader's units.
func ArgDuration(d time.Duration) PhraseArg {
	ms := d.Milliseconds()
	return PhraseArg{MS: &ms}
}

// ArgTime is a time, said in the reader's zone.
func ArgTime(t time.Time) PhraseArg {
	ms := t.UnixMilli()
	return PhraseArg{At: &ms}
}
