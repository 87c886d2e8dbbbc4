// Command multi_io trains a model of two inputs and two outputs: the
// support-ticket model of Keras' functional API guide ("Models with
// multiple inputs and outputs"), which reads a ticket's title and its tags
// and gives the ticket a priority (high or not) and the department that
// should handle it. It is written with gokeras' functional API: nn.Input
// for each input, nn.Apply for each layer call, nn.NewModel with both
// lists.
//
//	go run ./examples/multi_io
//	go run ./examples/multi_io --epochs 3 --model /tmp/tickets.safetensors --onnx /tmp/tickets.onnx
//
// The guide trains on random numbers; this example makes up tickets that
// have something to learn, with a fixed seed (--seed), so nothing is
// downloaded and every run sees the same tickets. A ticket belongs to one
// of four departments (billing, technical, shipping, account) and its
// title has a few of that department's words, now and then one of another
// department's, and filler words; its tags often name its department. One
// ticket in twenty was routed to another department, as in a real history
// of tickets, so that no model gets every department right. A ticket is of
// high priority when its title has an urgent word ("urgent", "asap", ...)
// or it is tagged "outage" or "vip": the priority needs both inputs.
//
// Where gokeras lacks what the guide uses, another layer stands in: a 1D
// convolution and a global max pooling over the title's embedded words
// instead of an LSTM. Each output has a sigmoid or softmax activation,
// where the guide outputs logits, so that predictions (and the ONNX
// model's outputs) are probabilities.
//
// The program trains with a validation split, printing Keras' progress
// with each output's loss and accuracy (priority_loss, department_loss,
// priority_accuracy, department_accuracy), evaluates on tickets it did not
// train on, saves the whole model (Save), loads it back (nn.LoadModel) and
// checks that it predicts what the trained one does, and exports it to
// ONNX, whose graph takes input_1 (the title's word indices) and input_2
// (the tags) and returns priority and department.
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
	"slices"
	"strings"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/device"
	"github.com/gokeras/gokeras/export/onnx"
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
		fmt.Fprintln(os.Stderr, "multi_io:", err)
		os.Exit(1)
	}
}

// The tickets' words: index 0 pads a short title. Each department has its
// words; urgent words make a ticket of high priority.
var (
	departments     = []string{"billing", "technical", "shipping", "account"}
	departmentWords = [][]string{
		{"invoice", "refund", "charge", "payment", "bill", "price", "card", "subscription"},
		{"error", "crash", "bug", "install", "update", "slow", "app", "server"},
		{"package", "delivery", "tracking", "courier", "parcel", "address", "late", "damaged"},
		{"password", "login", "email", "profile", "username", "delete", "locked", "signup"},
	}
	urgentWords = []string{"urgent", "asap", "immediately", "emergency", "critical"}
	fillerWords = []string{"my", "the", "is", "not", "please", "help", "with", "a", "i", "need", "since", "today", "again", "still", "why", "can't"}
	// tags are the ticket's multi-hot tags: the first four name the
	// departments.
	tags = []string{"billing", "technical", "shipping", "account", "vip", "outage", "feedback", "question", "mobile", "web", "europe", "new-customer"}
)

const (
	titleLen = 10 // words in a title, padded with index 0
	pad      = "<pad>"
)

// vocabulary lists every word once, pad first: a word's index is what the
// Embedding layer reads.
func vocabulary() []string {
	words := []string{pad}
	for _, ws := range departmentWords {
		words = append(words, ws...)
	}
	words = append(words, urgentWords...)
	return append(words, fillerWords...)
}

// tickets are n made-up tickets: each title as word indices, each ticket's
// tags as 0s and 1s, its department and whether it is of high priority.
type tickets struct {
	titles, tags [][]float32
	department   []int
	priority     []float32
}

// makeTickets makes n tickets from rng, as the package doc says.
func makeTickets(rng *rand.Rand, n int) tickets {
	vocab := vocabulary()
	index := make(map[string]int, len(vocab))
	for i, w := range vocab {
		index[w] = i
	}
	pick := func(ws []string) string { return ws[rng.IntN(len(ws))] }
	var t tickets
	for range n {
		d := rng.IntN(len(departments))
		var words []string
		for range 2 + rng.IntN(3) {
			words = append(words, pick(departmentWords[d]))
		}
		if rng.Float64() < 0.3 { // a word of another department
			words = append(words, pick(departmentWords[(d+1+rng.IntN(len(departments)-1))%len(departments)]))
		}
		urgent := rng.Float64() < 0.25
		if urgent {
			words = append(words, pick(urgentWords))
		}
		for length := 4 + rng.IntN(titleLen-3); len(words) < length; {
			words = append(words, pick(fillerWords))
		}
		rng.Shuffle(len(words), func(i, j int) { words[i], words[j] = words[j], words[i] })
		title := make([]float32, titleLen)
		for i, w := range words {
			title[i] = float32(index[w])
		}

		tag := make([]float32, len(tags))
		set := func(name string, p float64) {
			if rng.Float64() < p {
				tag[slices.Index(tags, name)] = 1
			}
		}
		set(departments[d], 0.6)
		set("vip", 0.12)
		if d == 1 {
			set("outage", 0.25)
		} else {
			set("outage", 0.04)
		}
		for _, other := range tags[6:] {
			set(other, 0.1)
		}
		var high float32
		if urgent || tag[slices.Index(tags, "outage")] == 1 || tag[slices.Index(tags, "vip")] == 1 {
			high = 1
		}

		t.titles = append(t.titles, title)
		t.tags = append(t.tags, tag)
		if rng.Float64() < 0.05 { // misrouted
			d = (d + 1 + rng.IntN(len(departments)-1)) % len(departments)
		}
		t.department = append(t.department, d)
		t.priority = append(t.priority, high)
	}
	return t
}

// inputs are the tickets as the model takes them: the titles, then the
// tags, in the order of the model's inputs.
func (t tickets) inputs() data.Samples {
	return data.InputTuple(data.Rows(t.titles), data.Rows(t.tags))
}

// dataset pairs the tickets with their labels, in the order of the
// model's outputs: priority, then department.
func (t tickets) dataset() (data.Dataset, error) {
	return data.SliceData(t.inputs(), data.LabelTuple(data.Targets(t.priority), data.Classes(t.department, len(departments))))
}

// describe writes ticket i in words, with its labels.
func (t tickets) describe(i int) string {
	vocab := vocabulary()
	var words, tagged []string
	for _, w := range t.titles[i] {
		if w != 0 {
			words = append(words, vocab[int(w)])
		}
	}
	for j, on := range t.tags[i] {
		if on == 1 {
			tagged = append(tagged, tags[j])
		}
	}
	priority := "normal"
	if t.priority[i] == 1 {
		priority = "high"
	}
	return fmt.Sprintf("%q tags [%s]: %s, %s priority", strings.Join(words, " "), strings.Join(tagged, " "), departments[t.department[i]], priority)
}

// newModel is the guide's model, with a convolution where it has an LSTM:
// the title's words embedded, convolved and max-pooled, joined with the
// tags, then a priority (1 sigmoid) and a department (4 softmax).
func newModel() (*nn.Model, error) {
	title := nn.Input(titleLen)   // input_1: word indices
	tagged := nn.Input(len(tags)) // input_2: 0s and 1s
	x := nn.Apply(layers.Embedding(len(vocabulary()), 16), title)
	x = nn.Apply(layers.Conv1D(32, 3, layers.Padding("same"), layers.ReLU), x)
	x = nn.Apply(layers.GlobalMaxPooling1D(), x)
	x = nn.Apply(layers.Concatenate(-1), x, nn.Apply(layers.Dense(16, layers.ReLU), tagged))
	priority := nn.Apply(layers.Dense(1, layers.Sigmoid, layers.Named("priority")), x)
	department := nn.Apply(layers.Dense(len(departments), layers.Softmax, layers.Named("department")), x)
	return nn.NewModel([]*nn.Tensor{title, tagged}, []*nn.Tensor{priority, department})
}

// run is the whole program; main only wires it to the process, so a test
// can run it with its own flags and output.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("multi_io", flag.ContinueOnError)
	fs.SetOutput(stderr)
	epochs := fs.Int("epochs", 10, "epochs to train")
	samples := fs.Int("samples", 4000, "tickets to train on (a fifth of them for validation); a quarter as many more to test on")
	batchSize := fs.Int("batch-size", 32, "tickets per step")
	seed := fs.Uint64("seed", 1, "seed of the tickets, the weights and the shuffles")
	deviceName := fs.String("device", device.DefaultSpec().Short(), `device for the model ("/GPU:0" or "/CPU:0")`)
	modelPath := fs.String("model", "tickets.safetensors", "file the whole trained model is saved to (Save) and loaded back from")
	onnxPath := fs.String("onnx", "tickets.onnx", "file the ONNX model is exported to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: multi_io takes flags only (see -h)", fs.Args())
	}
	if *samples < 10 {
		return fmt.Errorf("--samples %d: give at least 10 tickets, so that a fifth of them can validate", *samples)
	}

	// Check the device and where the files go before training.
	spec, err := device.ParseSpec(*deviceName)
	if err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	if _, err := device.Resolve(ctx, &spec, device.PlaceOptions{}); err != nil {
		return fmt.Errorf("--device: %w", err)
	}
	if err := checkOutput("model", *modelPath, "tickets.safetensors"); err != nil {
		return err
	}
	if err := checkOutput("onnx", *onnxPath, "tickets.onnx"); err != nil {
		return err
	}
	if same, err := samePath(*modelPath, *onnxPath); err != nil {
		return err
	} else if same {
		return fmt.Errorf("--model and --onnx are both %s: the ONNX export would replace the saved model; give them different paths", *modelPath)
	}

	rng := rand.New(rand.NewPCG(*seed, 0x7469636b))
	train, test := makeTickets(rng, *samples), makeTickets(rng, max(*samples/4, 1))
	fmt.Fprintf(stdout, "%d tickets to train on, %d to test on; %d words, %d tags, %d departments. The first three:\n",
		*samples, len(test.priority), len(vocabulary()), len(tags), len(departments))
	for i := range 3 {
		fmt.Fprintf(stdout, "  %s\n", train.describe(i))
	}
	trainDS, err := train.dataset()
	if err != nil {
		return err
	}
	testDS, err := test.dataset()
	if err != nil {
		return err
	}

	model, err := newModel()
	if err != nil {
		return err
	}
	model.SetSeed(*seed)
	// The guide's compile: RMSprop(1e-3), binary cross-entropy for the
	// priority and categorical for the department (sparse here: the
	// labels are class indices), the department's loss weighted 0.2.
	opt, err := optim.NewRMSprop(optim.RMSpropConfig{LearningRate: 1e-3})
	if err != nil {
		return err
	}
	if err := model.Compile(opt, nil, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice(spec),
		nn.OutputLosses(losses.BinaryCrossentropy{}, losses.SparseCategoricalCrossentropy{}),
		nn.LossWeights(1, 0.2)); err != nil {
		return err
	}
	defer model.Close()
	if err := model.Summary(stdout); err != nil {
		return err
	}

	if _, err := model.Fit(ctx, trainDS, nn.Epochs(*epochs), nn.BatchSize(*batchSize), nn.ValidationSplit(0.2),
		nn.Seed(*seed), nn.Output(stdout)); err != nil {
		return err
	}
	scores, err := model.Evaluate(ctx, testDS, nn.Verbose(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Test: loss %.4f, priority accuracy %.4f, department accuracy %.4f\n",
		scores["loss"], scores["priority_accuracy"], scores["department_accuracy"])

	// The whole model, saved and loaded back, predicts what it did.
	if err := model.Save(*modelPath); err != nil {
		return err
	}
	loaded, err := nn.LoadModel(*modelPath, nn.CompileOptions(nn.OnDevice(spec)))
	if err != nil {
		return err
	}
	defer loaded.Close()
	testIn, err := data.SliceInputs(test.inputs())
	if err != nil {
		return err
	}
	want, err := model.PredictOutputs(ctx, testIn)
	if err != nil {
		return err
	}
	got, err := loaded.PredictOutputs(ctx, testIn)
	if err != nil {
		return err
	}
	diff := 0.0
	for k := range want {
		for i, w := range want[k].Values() {
			diff = max(diff, math.Abs(float64(got[k].Values()[i]-w)))
		}
	}
	if diff != 0 {
		return fmt.Errorf("the model loaded from %s predicts up to %g away from the trained one: the saved file does not hold the model", *modelPath, diff)
	}
	fmt.Fprintf(stdout, "Saved %s; loaded back, it predicts the %d test tickets as the trained model does (outputs %s)\n",
		*modelPath, testIn.Len(), strings.Join(loaded.OutputNames(), ", "))

	if err := onnx.ExportFile(model, *onnxPath); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Exported %s: inputs input_1 (title: %d word indices) and input_2 (tags: %d 0s and 1s), outputs priority (1) and department (%d)\n",
		*onnxPath, titleLen, len(tags), len(departments))

	// What the model says of the first test tickets.
	for i := range min(3, testIn.Len()) {
		dept := want[1].Row(i)
		best := slices.Index(dept, slices.Max(dept))
		fmt.Fprintf(stdout, "  %s\n    predicted: %s (%.2f), priority %.2f\n", test.describe(i), departments[best], dept[best], want[0].Row(i)[0])
	}
	return nil
}

// checkOutput fails, naming the flag, where no file can be written at
// path: an empty path, a directory (file is the name the error suggests
// in it), or a folder that is missing or not writable. It writes a file
// in the folder and removes it, so that a bad path fails before training
// rather than after.
func checkOutput(name, path, file string) error {
	if path == "" {
		return fmt.Errorf("--%s is empty: give the path of a file to write, e.g. %s", name, file)
	}
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fmt.Errorf("--%s %s is a directory: give the path of a file in it, e.g. %s", name, path, filepath.Join(path, file))
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".multi_io-check-*")
	if err != nil {
		return fmt.Errorf("--%s %s: no file can be written in %s (%w): create the folder or give another path", name, path, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// samePath reports whether two paths name the same file.
func samePath(a, b string) (bool, error) {
	x, err := filepath.Abs(a)
	if err != nil {
		return false, err
	}
	y, err := filepath.Abs(b)
	if err != nil {
		return false, err
	}
	return x == y, nil
}
