package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	wire "github.com/gokeras/gokeras/internal/formats/onnx"
	"github.com/gokeras/gokeras/nn"
)

// TestExampleSmall runs the example on 400 tickets for two epochs and
// checks what it prints, the model it saves and the ONNX model it
// exports: the graph's inputs and outputs by name and shape.
func TestExampleSmall(t *testing.T) {
	dir := t.TempDir()
	modelPath, onnxPath := filepath.Join(dir, "tickets.safetensors"), filepath.Join(dir, "tickets.onnx")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--device=/CPU:0", "--epochs", "2", "--samples", "400",
		"--model", modelPath, "--onnx", onnxPath}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, re := range []string{
		`(?m)^400 tickets to train on, 100 to test on; 54 words, 12 tags, 4 departments\.`,
		`(?m)^  ".*" tags \[.*\]: (billing|technical|shipping|account), (normal|high) priority$`,
		`(?m)^ priority \(Dense\) +\(None, 1\) +49 +\['concatenate\[0\]\[0\]'\]`,
		`(?m)^Epoch 2/2$`,
		// Keras 2's progress line, with each output's loss and accuracy.
		`(?m)^10/10 \[={30}\] - .* - loss: \d+\.\d{4} - priority_loss: \d+\.\d{4} - department_loss: \d+\.\d{4} - ` +
			`priority_accuracy: \d\.\d{4} - department_accuracy: \d\.\d{4} - val_loss: \d+\.\d{4} - val_priority_loss: \d+\.\d{4} - ` +
			`val_department_loss: \d+\.\d{4} - val_priority_accuracy: \d\.\d{4} - val_department_accuracy: \d\.\d{4}$`,
		`(?m)^Test: loss \d+\.\d{4}, priority accuracy \d\.\d{4}, department accuracy \d\.\d{4}$`,
		`(?m)^Saved .*tickets\.safetensors; loaded back, it predicts the 100 test tickets as the trained model does \(outputs priority, department\)$`,
		`(?m)^Exported .*tickets\.onnx: inputs input_1 .* outputs priority \(1\) and department \(4\)$`,
		`(?m)^    predicted: (billing|technical|shipping|account) \(\d\.\d\d\), priority \d\.\d\d$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the output has no line matching %s:\n%s", re, out)
		}
	}

	loaded, err := nn.LoadModel(modelPath, nn.CompileOptions(nn.OnDevice("/CPU:0")))
	if err != nil {
		t.Fatalf("the saved model does not load: %v", err)
	}
	defer loaded.Close()
	if got := loaded.OutputNames(); !slices.Equal(got, []string{"priority", "department"}) {
		t.Errorf("the saved model's outputs are %v", got)
	}

	b, err := os.ReadFile(onnxPath)
	if err != nil {
		t.Fatal(err)
	}
	om, err := wire.Decode(b)
	if err != nil {
		t.Fatalf("the ONNX file does not decode: %v", err)
	}
	describe := func(vs []wire.ValueInfo) string {
		var parts []string
		for _, v := range vs {
			var dims []string
			for _, d := range v.Dims {
				if d.Param != "" {
					dims = append(dims, d.Param)
				} else {
					dims = append(dims, fmt.Sprint(d.Value))
				}
			}
			parts = append(parts, v.Name+"("+strings.Join(dims, ",")+")")
		}
		return strings.Join(parts, " ")
	}
	if got, want := describe(om.Graph.Inputs), "input_1(batch,10) input_2(batch,12)"; got != want {
		t.Errorf("the ONNX graph's inputs are %s, want %s", got, want)
	}
	if got, want := describe(om.Graph.Outputs), "priority(batch,1) department(batch,4)"; got != want {
		t.Errorf("the ONNX graph's outputs are %s, want %s", got, want)
	}
}

// A bad output path fails before anything is trained, naming its flag.
func TestBadOutputPathsFailBeforeTraining(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"a missing folder", []string{"--model", filepath.Join(dir, "missing", "m.safetensors")}, []string{"--model", "create the folder"}},
		{"a directory", []string{"--onnx", dir}, []string{"--onnx", "is a directory", "tickets.onnx"}},
		{"the same file", []string{"--model", filepath.Join(dir, "x"), "--onnx", filepath.Join(dir, "x")}, []string{"--model and --onnx", "different paths"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"--device=/CPU:0", "--model", filepath.Join(dir, "m.safetensors"), "--onnx", filepath.Join(dir, "m.onnx")}
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append(args, c.args...), &stdout, &stderr)
			if err == nil {
				t.Fatal("it ran")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error does not say %q: %v", w, err)
				}
			}
			if stdout.Len() > 0 {
				t.Errorf("it printed before failing:\n%s", stdout.String())
			}
		})
	}
}

// The tickets are the same for a seed, and their labels follow the rules
// the package doc gives: high priority exactly for an urgent word or an
// "outage" or "vip" tag; the department's words in its title, but for
// about one misrouted ticket in twenty.
func TestTickets(t *testing.T) {
	a, b := makeTickets(rand.New(rand.NewPCG(3, 4)), 2000), makeTickets(rand.New(rand.NewPCG(3, 4)), 2000)
	if !slices.EqualFunc(a.titles, b.titles, slices.Equal) || !slices.Equal(a.department, b.department) {
		t.Error("two runs of one seed made other tickets")
	}
	vocab := vocabulary()
	misrouted := 0
	for i, title := range a.titles {
		var words []string
		for _, w := range title {
			words = append(words, vocab[int(w)])
		}
		urgent := slices.ContainsFunc(words, func(w string) bool { return slices.Contains(urgentWords, w) })
		high := urgent || a.tags[i][slices.Index(tags, "outage")] == 1 || a.tags[i][slices.Index(tags, "vip")] == 1
		if (a.priority[i] == 1) != high {
			t.Errorf("ticket %d (%s): priority %v", i, a.describe(i), a.priority[i])
		}
		own := 0
		for _, w := range words {
			if slices.Contains(departmentWords[a.department[i]], w) {
				own++
			}
		}
		if own < 2 {
			misrouted++
		}
	}
	if misrouted < 50 || misrouted > 150 {
		t.Errorf("%d of 2000 tickets have fewer than two words of their department: want about one in twenty", misrouted)
	}
}
