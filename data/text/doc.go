// Package text turns texts into what a model reads: sequences of token
// indices, as Keras' TextVectorization layer does in its "int" mode.
//
// A Vectorizer standardizes a text (lower case, ASCII punctuation
// stripped), splits it (on whitespace, or into characters), and looks each
// token up in a vocabulary it learns from data with Adapt: index 0 pads,
// index 1 is "[UNK]" for a token it has not kept, and the learned tokens
// follow, the most frequent first, at most MaxTokens in all:
//
//	v, err := text.New(text.Options{MaxTokens: 20000, OutputSequenceLength: 200})
//	err = v.Adapt(trainTexts)
//	x, err := v.Vectorize(trainTexts) // [][]float32, each row 200 indices
//	ds, err := data.SliceData(data.Rows(x), data.Classes(labels, 2))
//
// The model then starts with layers.Embedding(v.VocabularySize(), dim).
// Split: text.Character gives a character-level vocabulary, for a
// language model of characters.
package text
