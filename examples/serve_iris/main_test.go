package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/data"
	"github.com/gokeras/gokeras/nn"
)

// The embedded model serves: each flower's predictions are the model's
// Predict, bit for bit, the species their argmax; the embedded model
// knows the flowers (>= 95% of the 150); bad requests get a 400 that says
// why.
func TestServesTheEmbeddedModel(t *testing.T) {
	model, err := nn.LoadModelFS(modelFiles, "model.safetensors", nn.CompileOptions(nn.OnDevice("/CPU:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer model.Close()
	srv := httptest.NewServer(newHandler(model))
	defer srv.Close()
	x, y, err := readIris()
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(predictRequest{Instances: x})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(srv.URL+"/v1/models/iris:predict", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %s: %s", resp.Status, msg)
	}
	var got predictResponse
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	in, err := data.SliceInputs(data.Rows(x))
	if err != nil {
		t.Fatal(err)
	}
	want, err := model.Predict(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	right := 0
	for i, row := range want.Rows() {
		if !slices.Equal(got.Predictions[i], row) {
			t.Fatalf("flower %d: served %v, Predict %v", i, got.Predictions[i], row)
		}
		if got.Classes[i] == species[y[i]] {
			right++
		}
	}
	if right < 143 {
		t.Errorf("the served model names %d of 150 flowers right, want at least 143", right)
	}
	for _, c := range []struct {
		name, body, want string
	}{
		{"not JSON", "flowers", "is not"},
		{"no instances", `{"instances": []}`, "no instances"},
		{"three measurements", `{"instances": [[1, 2, 3]]}`, "give 4"},
		{"ragged rows", `{"instances": [[1, 2, 3, 4], [1, 2]]}`, "row 1"},
		{"another field", `{"inputs": [[1, 2, 3, 4]]}`, "unknown field"},
		{"huge measurements", `{"instances": [[3e38, 3e38, 3e38, 3e38]]}`, "not finite"},
	} {
		resp, err := http.Post(srv.URL+"/v1/models/iris:predict", "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		msg, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 4 || !strings.Contains(string(msg), c.want) || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %s %s (%s), want a JSON 4xx saying %q", c.name, resp.Status, msg, resp.Header.Get("Content-Type"), c.want)
		}
		var e map[string]string
		if err := json.Unmarshal(msg, &e); err != nil {
			t.Errorf("%s: the error is not JSON: %s", c.name, msg)
		}
	}
}

// --train trains a model that the server can load, and checks where it
// goes before training.
func TestTrainWritesAModel(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.safetensors")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"--train", path, "--epochs", "40"}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "held-out flowers") {
		t.Errorf("output:\n%s", out.String())
	}
	m, err := nn.LoadModel(path, nn.CompileOptions(nn.OnDevice("/CPU:0")))
	if err != nil {
		t.Fatal(err)
	}
	m.Close()
	err = run(context.Background(), []string{"--train", t.TempDir()}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("--train to a folder: %v", err)
	}
	err = run(context.Background(), []string{"--train", filepath.Join(t.TempDir(), "no", "such", "m.safetensors")}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "cannot write") {
		t.Errorf("--train into a missing folder: %v", err)
	}
}
