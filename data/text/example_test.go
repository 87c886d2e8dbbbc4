package text_test

import (
	"fmt"
	"log"

	"github.com/gokeras/gokeras/data/text"
)

// The example of Keras' TextVectorization docs: a vocabulary adapted
// from three words, then two texts as sequences of 4 indices (0 pads, 1
// is a word out of the vocabulary).
func Example() {
	v, err := text.New(text.Options{MaxTokens: 5000, OutputSequenceLength: 4})
	if err != nil {
		log.Fatal(err)
	}
	if err := v.Adapt([]string{"foo", "bar", "baz"}); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%q\n", v.Vocabulary())
	x, err := v.Vectorize([]string{"Foo qux bar!", "qux baz"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(x)
	// Output:
	// ["" "[UNK]" "foo" "baz" "bar"]
	// [[2 1 4 0] [1 3 0 0]]
}

// A character vocabulary, for a language model of characters: each
// character is a token, and Decode joins indices back into text.
func Example_characters() {
	v, err := text.New(text.Options{Split: text.Character, Standardize: text.Lower})
	if err != nil {
		log.Fatal(err)
	}
	if err := v.Adapt([]string{"Call me Ishmael."}); err != nil {
		log.Fatal(err)
	}
	idx, err := v.Indices("a mile")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(v.VocabularySize(), idx)
	s, _ := v.Decode(idx, "")
	fmt.Println(s)
	// Output:
	// 12 [5 6 3 8 2 4]
	// a mile
}
