package text

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	cases := []struct {
		name string
		opts Options
		in   string
		want []string
	}{
		{"default", Options{}, "Hello, World! It's 3:00.", []string{"hello", "world", "its", "300"}},
		{"default keeps non-ASCII punctuation", Options{}, "Ça va—Très «bien»", []string{"ça", "va—très", "«bien»"}},
		{"runs of whitespace", Options{}, "  a \t\n\r b\v\fc  ", []string{"a", "b", "c"}},
		{"no-break space is no split", Options{}, "a\u00a0b c", []string{"a\u00a0b", "c"}},
		{"every ASCII punctuation mark", Options{}, "x!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~y", []string{"xy"}},
		{"lower", Options{Standardize: Lower}, "Hello, World!", []string{"hello,", "world!"}},
		{"strip punctuation", Options{Standardize: StripPunctuation}, "Hello, World!", []string{"Hello", "World"}},
		{"none", Options{Standardize: None}, "A.B c", []string{"A.B", "c"}},
		{"characters", Options{Standardize: Lower, Split: Character}, "Ab é", []string{"a", "b", " ", "é"}},
		{"characters, default standardize", Options{Split: Character}, "A, b", []string{"a", " ", "b"}},
		{"no split", Options{Split: None}, "Hello World", []string{"hello world"}},
		{"empty text", Options{}, "", []string{}},
		{"empty text, characters", Options{Split: Character}, "", []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Tokens(c.in); !slices.Equal(got, c.want) {
				t.Errorf("Tokens(%q) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestAdapt(t *testing.T) {
	cases := []struct {
		name  string
		opts  Options
		texts []string
		want  []string
	}{
		// Keras' TextVectorization docs: adapt on "foo", "bar", "baz",
		// each once, gives ["", "[UNK]", "foo", "baz", "bar"].
		{"Keras' doc example: ties in reverse order", Options{MaxTokens: 5000}, []string{"foo", "bar", "baz"}, []string{"", "[UNK]", "foo", "baz", "bar"}},
		{"by count, then ties", Options{}, []string{"b a c", "a b a d"}, []string{"", "[UNK]", "a", "b", "d", "c"}},
		{"max tokens keeps the most frequent", Options{MaxTokens: 4}, []string{"b a c", "a b a d"}, []string{"", "[UNK]", "a", "b"}},
		{"max tokens 2: nothing learned", Options{MaxTokens: 2}, []string{"a b"}, []string{"", "[UNK]"}},
		{"a text's own [UNK] is not learned", Options{Standardize: None}, []string{"[UNK] [UNK] x"}, []string{"", "[UNK]", "x"}},
		{"characters", Options{Split: Character, Standardize: None}, []string{"abba", "c"}, []string{"", "[UNK]", "b", "a", "c"}},
		{"standardized first", Options{}, []string{"The the THE, cat."}, []string{"", "[UNK]", "the", "cat"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := New(c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Adapt(c.texts); err != nil {
				t.Fatal(err)
			}
			if got := v.Vocabulary(); !slices.Equal(got, c.want) {
				t.Errorf("vocabulary %q, want %q", got, c.want)
			}
			if v.VocabularySize() != len(c.want) {
				t.Errorf("VocabularySize %d, want %d", v.VocabularySize(), len(c.want))
			}
		})
	}
}

// Adapt replaces the vocabulary; it does not add to it.
func TestAdaptReplaces(t *testing.T) {
	v, _ := New(Options{})
	if err := v.Adapt([]string{"old words"}); err != nil {
		t.Fatal(err)
	}
	if err := v.Adapt([]string{"new"}); err != nil {
		t.Fatal(err)
	}
	if got := v.Vocabulary(); !slices.Equal(got, []string{"", "[UNK]", "new"}) {
		t.Errorf("vocabulary after a second Adapt: %q", got)
	}
	if got, _ := v.Indices("old new"); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("indices of %q: %v", "old new", got)
	}
}

func TestVectorize(t *testing.T) {
	cases := []struct {
		name   string
		length int
		texts  []string
		want   [][]float32
	}{
		// Keras' docs: output_sequence_length=4, "foo qux bar" and
		// "qux baz" give [[2, 1, 4, 0], [1, 3, 0, 0]].
		{"Keras' doc example", 4, []string{"foo qux bar", "qux baz"}, [][]float32{{2, 1, 4, 0}, {1, 3, 0, 0}}},
		{"truncate keeps the first tokens", 2, []string{"foo bar baz", "baz"}, [][]float32{{2, 4}, {3, 0}}},
		{"0 pads to the longest", 0, []string{"bar", "foo baz qux", ""}, [][]float32{{4, 0, 0}, {2, 3, 1}, {0, 0, 0}}},
		{"0 with nothing to pad", 0, []string{"", ""}, [][]float32{{}, {}}},
		{"no texts", 3, nil, [][]float32{}},
		{"case and punctuation", 3, []string{"FOO! Bar?"}, [][]float32{{2, 4, 0}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := New(Options{MaxTokens: 5000, OutputSequenceLength: c.length})
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Adapt([]string{"foo", "bar", "baz"}); err != nil {
				t.Fatal(err)
			}
			got, err := v.Vectorize(c.texts)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(got, c.want, slices.Equal) {
				t.Errorf("Vectorize(%q) = %v, want %v", c.texts, got, c.want)
			}
		})
	}
}

// A row Vectorize returns cannot grow into the next one.
func TestVectorizeRowsAreSeparate(t *testing.T) {
	v, _ := New(Options{OutputSequenceLength: 2})
	_ = v.Adapt([]string{"a b"})
	rows, err := v.Vectorize([]string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	_ = append(rows[0], 9)
	if rows[1][0] != 2 { // vocabulary "", "[UNK]", "b", "a"
		t.Errorf("appending to row 0 changed row 1: %v", rows)
	}
}

func TestSetVocabulary(t *testing.T) {
	cases := []struct {
		name    string
		max     int
		tokens  []string
		want    []string
		wantErr string
	}{
		{"learned tokens only", 0, []string{"earth", "wind", "and", "fire"}, []string{"", "[UNK]", "earth", "wind", "and", "fire"}, ""},
		{"as Vocabulary returns it", 0, []string{"", "[UNK]", "earth"}, []string{"", "[UNK]", "earth"}, ""},
		{"a repeated token", 0, []string{"a", "b", "a"}, nil, `token "a" is in the vocabulary twice (indices 2 and 4)`},
		{"the padding token later", 0, []string{"a", ""}, nil, `token "" is in the vocabulary twice`},
		{"more than max tokens", 3, []string{"a", "b"}, nil, "a vocabulary of 4 tokens (with the padding and OOV tokens) is more than MaxTokens 3"},
		{"exactly max tokens", 4, []string{"a", "b"}, []string{"", "[UNK]", "a", "b"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := New(Options{MaxTokens: c.max})
			if err != nil {
				t.Fatal(err)
			}
			err = v.SetVocabulary(c.tokens)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, c.wantErr)
				}
				if v.Vocabulary() != nil {
					t.Errorf("a refused vocabulary was kept: %q", v.Vocabulary())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := v.Vocabulary(); !slices.Equal(got, c.want) {
				t.Errorf("vocabulary %q, want %q", got, c.want)
			}
		})
	}
}

func TestNewRefuses(t *testing.T) {
	cases := []struct {
		opts Options
		want string
	}{
		{Options{Standardize: "lower_case"}, `Standardize "lower_case"`},
		{Options{Split: "words"}, `Split "words"`},
		{Options{MaxTokens: -1}, "MaxTokens -1"},
		{Options{MaxTokens: 1}, "MaxTokens 1"},
		{Options{OutputSequenceLength: -2}, "OutputSequenceLength -2"},
	}
	for _, c := range cases {
		if _, err := New(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v): %v, want an error saying %q", c.opts, err, c.want)
		}
	}
	v, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Options(); got.Standardize != LowerAndStripPunctuation || got.Split != Whitespace {
		t.Errorf("defaults: %+v", got)
	}
}

func TestNoVocabulary(t *testing.T) {
	v, _ := New(Options{})
	if _, err := v.Vectorize([]string{"a"}); !errors.Is(err, ErrNoVocabulary) {
		t.Errorf("Vectorize before Adapt: %v", err)
	}
	if _, err := v.Indices("a"); !errors.Is(err, ErrNoVocabulary) {
		t.Errorf("Indices before Adapt: %v", err)
	}
}

func TestDecode(t *testing.T) {
	v, _ := New(Options{Split: Character, Standardize: None})
	if err := v.Adapt([]string{"hello"}); err != nil {
		t.Fatal(err)
	}
	idx, err := v.Indices("hole!")
	if err != nil {
		t.Fatal(err)
	}
	got, err := v.Decode(append(idx, 0, 0), "")
	if err != nil || got != "hole[UNK]" {
		t.Errorf("Decode = %q, %v; want %q", got, err, "hole[UNK]")
	}
	if got, _ := v.Decode([]int{2, 0, 3}, " "); got != "l o" { // "", "[UNK]", "l", "o", "h", "e"
		t.Errorf("Decode with a separator = %q", got)
	}
	if _, err := v.Decode([]int{6}, ""); err == nil || !strings.Contains(err.Error(), "index 6 is outside the vocabulary of 6 tokens") {
		t.Errorf("Decode of an index past the vocabulary: %v", err)
	}
}
