package text

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// The standardizations a Vectorizer applies before it splits, Keras'
// values of TextVectorization's standardize argument.
const (
	LowerAndStripPunctuation = "lower_and_strip_punctuation" // the default
	Lower                    = "lower"
	StripPunctuation         = "strip_punctuation"
	None                     = "none" // the text as it is; also a Split
)

// The splits a Vectorizer applies, Keras' values of TextVectorization's
// split argument (and None: each text is one token).
const (
	Whitespace = "whitespace" // the default
	Character  = "character"
)

// The tokens every vocabulary starts with: index 0 pads a short sequence
// and index 1 stands for a token out of the vocabulary, as in Keras.
const (
	Padding = ""
	OOV     = "[UNK]"
)

// ErrNoVocabulary is returned by a Vectorizer asked to map tokens before
// it has a vocabulary (Adapt or SetVocabulary).
var ErrNoVocabulary = errors.New("the vectorizer has no vocabulary yet")

// Options are a Vectorizer's settings, TextVectorization's arguments of
// the same names. The zero value is Keras' default: lower case without
// punctuation, split on whitespace, no limit on the vocabulary, and each
// batch padded to its longest text.
type Options struct {
	// MaxTokens caps the vocabulary, the padding and OOV tokens
	// included: Adapt keeps the MaxTokens-2 most frequent tokens. 0: no
	// cap.
	MaxTokens int
	// Standardize is LowerAndStripPunctuation (the default when empty),
	// Lower, StripPunctuation or None.
	Standardize string
	// Split is Whitespace (the default when empty), Character or None.
	Split string
	// OutputSequenceLength pads (with 0) or truncates (keeping the first
	// tokens) every sequence Vectorize returns to this length. 0: pad each
	// call's sequences to its longest.
	OutputSequenceLength int
}

// Vectorizer turns texts into sequences of token indices, like
// keras.layers.TextVectorization in its "int" output mode: it
// standardizes a text, splits it into tokens and looks each token up in
// a vocabulary learned from data by Adapt (or set by SetVocabulary).
// Index 0 is the padding, index 1 the out-of-vocabulary token "[UNK]",
// and the learned tokens follow, the most frequent first.
//
// It is a plain Go value, used before the data reach a model: its
// output is what data.Rows and an Embedding layer take. A Vectorizer is
// safe for concurrent use by several goroutines once its vocabulary is
// set, as long as none calls Adapt or SetVocabulary meanwhile.
type Vectorizer struct {
	opts  Options
	vocab []string
	index map[string]int
}

// New returns a Vectorizer with the given options and no vocabulary. It
// fails, naming the option, on an unknown standardization or split, or a
// negative or too small size.
func New(opts Options) (*Vectorizer, error) {
	if opts.Standardize == "" {
		opts.Standardize = LowerAndStripPunctuation
	}
	if opts.Split == "" {
		opts.Split = Whitespace
	}
	switch opts.Standardize {
	case LowerAndStripPunctuation, Lower, StripPunctuation, None:
	default:
		return nil, fmt.Errorf("text: Standardize %q is not one of %q, %q, %q or %q", opts.Standardize,
			LowerAndStripPunctuation, Lower, StripPunctuation, None)
	}
	switch opts.Split {
	case Whitespace, Character, None:
	default:
		return nil, fmt.Errorf("text: Split %q is not one of %q, %q or %q", opts.Split, Whitespace, Character, None)
	}
	if opts.MaxTokens < 0 || opts.MaxTokens == 1 {
		return nil, fmt.Errorf("text: MaxTokens %d: give 0 for no cap, or at least 2 (the padding and OOV tokens count)", opts.MaxTokens)
	}
	if opts.OutputSequenceLength < 0 {
		return nil, fmt.Errorf("text: OutputSequenceLength %d: give 0 to pad to the longest text, or a positive length", opts.OutputSequenceLength)
	}
	return &Vectorizer{opts: opts}, nil
}

// Options returns the vectorizer's options, defaults filled in.
func (v *Vectorizer) Options() Options { return v.opts }

// punctuation is what Keras' "strip_punctuation" removes: the ASCII
// punctuation of its DEFAULT_STRIP_REGEX, !"#$%&()*+,-./:;<=>?@[\]^_`{|}~
// and the apostrophe.
func punctuation(r rune) bool {
	return r < utf8.RuneSelf && strings.ContainsRune("!\"#$%&()*+,-./:;<=>?@[\\]^_`{|}~'", r)
}

// asciiSpace is the whitespace Keras splits on.
func asciiSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r':
		return true
	}
	return false
}

// Standardize returns s as the vectorizer's standardization leaves it:
// lower-cased (Unicode lower case) and/or stripped of ASCII punctuation.
func (v *Vectorizer) Standardize(s string) string {
	switch v.opts.Standardize {
	case LowerAndStripPunctuation:
		return strings.ToLower(stripPunctuation(s))
	case Lower:
		return strings.ToLower(s)
	case StripPunctuation:
		return stripPunctuation(s)
	}
	return s
}

func stripPunctuation(s string) string {
	if !strings.ContainsFunc(s, punctuation) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if punctuation(r) {
			return -1
		}
		return r
	}, s)
}

// Tokens returns the tokens of s: standardized, then split on ASCII
// whitespace (runs of it, none empty), into characters (Unicode code
// points), or not at all (one token, even when empty, as Keras keeps it).
func (v *Vectorizer) Tokens(s string) []string {
	s = v.Standardize(s)
	switch v.opts.Split {
	case Whitespace:
		return strings.FieldsFunc(s, asciiSpace)
	case Character:
		tokens := make([]string, 0, len(s))
		for i, r := range s {
			tokens = append(tokens, s[i:i+utf8.RuneLen(r)])
		}
		return tokens
	}
	return []string{s}
}

// Adapt learns the vocabulary from texts, as TextVectorization.adapt: the
// tokens of all texts counted, the most frequent first (ties broken as
// Keras breaks them: the token later in byte order first), at most
// MaxTokens-2 of them after the padding and OOV tokens. It replaces any
// vocabulary the vectorizer had.
func (v *Vectorizer) Adapt(texts []string) error {
	counts := map[string]int{}
	for _, s := range texts {
		for _, t := range v.Tokens(s) {
			counts[t]++
		}
	}
	// The padding and OOV tokens are reserved: a text's own "[UNK]" or
	// empty token maps to them.
	delete(counts, Padding)
	delete(counts, OOV)
	tokens := make([]string, 0, len(counts))
	for t := range counts {
		tokens = append(tokens, t)
	}
	slices.SortFunc(tokens, func(a, b string) int {
		if c := counts[b] - counts[a]; c != 0 {
			return c
		}
		return strings.Compare(b, a)
	})
	if v.opts.MaxTokens > 0 && len(tokens) > v.opts.MaxTokens-2 {
		tokens = tokens[:v.opts.MaxTokens-2]
	}
	return v.SetVocabulary(tokens)
}

// SetVocabulary sets the vocabulary to tokens, in order, as
// set_vocabulary does: the padding and OOV tokens come first, and tokens
// may start with them (as Vocabulary returns them) or leave them out. It
// fails on a repeated or empty token, or more tokens than MaxTokens allows.
func (v *Vectorizer) SetVocabulary(tokens []string) error {
	if len(tokens) >= 2 && tokens[0] == Padding && tokens[1] == OOV {
		tokens = tokens[2:]
	}
	if v.opts.MaxTokens > 0 && len(tokens)+2 > v.opts.MaxTokens {
		return fmt.Errorf("text: a vocabulary of %d tokens (with the padding and OOV tokens) is more than MaxTokens %d", len(tokens)+2, v.opts.MaxTokens)
	}
	if len(tokens)+2 > 1<<24 {
		return fmt.Errorf("text: a vocabulary of %d tokens: indices past 2^24 cannot be held exactly as float32", len(tokens)+2)
	}
	vocab := append([]string{Padding, OOV}, tokens...)
	index := make(map[string]int, len(vocab))
	for i, t := range vocab {
		if _, dup := index[t]; dup {
			return fmt.Errorf("text: token %q is in the vocabulary twice (indices %d and %d)", t, index[t], i)
		}
		index[t] = i
	}
	v.vocab, v.index = vocab, index
	return nil
}

// Vocabulary returns the tokens by index: the padding "" and "[UNK]"
// first, as get_vocabulary does. It is nil before Adapt or SetVocabulary.
func (v *Vectorizer) Vocabulary() []string { return slices.Clone(v.vocab) }

// VocabularySize is the number of indices, the padding and OOV tokens
// included: the input_dim of an Embedding that reads the sequences.
func (v *Vectorizer) VocabularySize() int { return len(v.vocab) }

// Indices returns the index of each token of s, 1 for a token out of the
// vocabulary, neither padded nor truncated.
func (v *Vectorizer) Indices(s string) ([]int, error) {
	if v.vocab == nil {
		return nil, fmt.Errorf("text: Indices: %w: call Adapt or SetVocabulary first", ErrNoVocabulary)
	}
	tokens := v.Tokens(s)
	out := make([]int, len(tokens))
	for i, t := range tokens {
		out[i] = v.lookup(t)
	}
	return out, nil
}

func (v *Vectorizer) lookup(t string) int {
	if i, ok := v.index[t]; ok {
		return i
	}
	return 1
}

// Vectorize returns each text's token indices, as TextVectorization
// called on a batch of texts: padded with 0 or truncated (its first
// tokens kept) to OutputSequenceLength, or when that is 0 padded to the
// longest text's length. The indices are float32, what data.Rows and an
// Embedding layer take.
func (v *Vectorizer) Vectorize(texts []string) ([][]float32, error) {
	if v.vocab == nil {
		return nil, fmt.Errorf("text: Vectorize: %w: call Adapt or SetVocabulary first", ErrNoVocabulary)
	}
	seqs := make([][]int, len(texts))
	length := v.opts.OutputSequenceLength
	for i, s := range texts {
		seqs[i], _ = v.Indices(s)
		if v.opts.OutputSequenceLength == 0 {
			length = max(length, len(seqs[i]))
		}
	}
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*length)
	for i, seq := range seqs {
		row := flat[i*length : (i+1)*length : (i+1)*length]
		for j, idx := range seq[:min(len(seq), length)] {
			row[j] = float32(idx)
		}
		out[i] = row
	}
	return out, nil
}

// Decode returns the tokens of indices, joined by sep; padding (index 0)
// is left out and an index outside the vocabulary is an error.
func (v *Vectorizer) Decode(indices []int, sep string) (string, error) {
	var b strings.Builder
	first := true
	for _, i := range indices {
		if i < 0 || i >= len(v.vocab) {
			return "", fmt.Errorf("text: Decode: index %d is outside the vocabulary of %d tokens", i, len(v.vocab))
		}
		if i == 0 {
			continue
		}
		if !first {
			b.WriteString(sep)
		}
		b.WriteString(v.vocab[i])
		first = false
	}
	return b.String(), nil
}
