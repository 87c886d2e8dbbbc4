package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/callbacks"
)

func TestTrainWritesTensorBoardLogs(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	logs, runJSON := filepath.Join(dir, "logs"), filepath.Join(dir, "run.json")
	r := runTrain(t, append(quick, "--seed", "4", "--validation", "--tensorboard", logs, "--json", runJSON)...)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if want := "TensorBoard logs written to " + logs + " (view them with: tensorboard --logdir " + logs + ")\n"; !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
	}
	raw, err := os.ReadFile(runJSON)
	if err != nil {
		t.Fatal(err)
	}
	var s summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	if len(s.Epochs) != 2 {
		t.Fatalf("--json has %d epochs, want 2", len(s.Epochs))
	}
	tests := []struct {
		run    string
		prefix string // of the --json figures the run holds
		extra  []string
	}{
		{"train", "", []string{"epoch_learning_rate"}},
		{"validation", "val_", nil},
	}
	for _, tc := range tests {
		files, err := filepath.Glob(filepath.Join(logs, tc.run, "events.out.tfevents.*.v2"))
		if err != nil || len(files) != 1 {
			t.Fatalf("%s run: files %v (%v), want one event file", tc.run, files, err)
		}
		events, err := callbacks.ReadTensorBoardEvents(files[0]) // checks every record's checksums
		if err != nil {
			t.Fatal(err)
		}
		if events[0].FileVersion != "brain.Event:2" {
			t.Errorf("%s run starts with %+v", tc.run, events[0])
		}
		got := map[string]float32{}
		var tags []string
		for _, e := range events[1:] {
			for _, v := range e.Values {
				key := fmt.Sprintf("%s@%d", v.Tag, e.Step)
				got[key] = v.SimpleValue
				if e.Step == 0 {
					tags = append(tags, v.Tag)
				}
			}
		}
		want := slices.Clone(tc.extra)
		for i, ep := range s.Epochs {
			for name, v := range ep.Figures {
				base, ok := strings.CutPrefix(name, tc.prefix)
				if !ok || (tc.prefix == "" && strings.HasPrefix(name, "val_")) {
					continue
				}
				key := fmt.Sprintf("epoch_%s@%d", base, i)
				if got[key] != float32(v) {
					t.Errorf("%s run: %s = %v, want %v (--json's %s of epoch %d)", tc.run, key, got[key], float32(v), name, i+1)
				}
				if i == 0 {
					want = append(want, "epoch_"+base)
				}
			}
		}
		slices.Sort(tags)
		slices.Sort(want)
		if !slices.Equal(tags, want) {
			t.Errorf("%s run: epoch 0 has %v, want %v", tc.run, tags, want)
		}
	}
}

func TestTrainChecksTensorBoardDirBeforeTraining(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "runs", "train"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "runs", "validation"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, logs, want string // DIR stands for dir
	}{
		{"under a file", "DIR/file/logs", "--tensorboard DIR/file/logs: DIR/file is not a directory: remove it or choose another log directory"},
		{"a file", "DIR/file", "--tensorboard DIR/file: DIR/file is not a directory: remove it or choose another log directory"},
		{"validation is a file", "DIR/runs", "--tensorboard DIR/runs: DIR/runs/validation is not a directory: remove it or choose another log directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			logs := strings.ReplaceAll(filepath.FromSlash(tc.logs), "DIR", dir)
			r := runTrain(t, append(quick, "--seed", "1", "--tensorboard", logs)...)
			want := strings.ReplaceAll(filepath.FromSlash(tc.want), "DIR", dir)
			if r.err == nil || r.err.Error() != want {
				t.Fatalf("error %v\nwant %s", r.err, want)
			}
			if r.stdout != "" {
				t.Errorf("printed before the error, so the check came late:\n%s", r.stdout)
			}
			if names := dirNamesOf(t, dir); strings.Join(names, " ") != "file runs" {
				t.Errorf("directory holds %v, want only what the test made", names)
			}
			if names := dirNamesOf(t, filepath.Join(dir, "runs", "train")); len(names) != 0 {
				t.Errorf("runs/train holds %v", names)
			}
		})
	}
}

// Every file output that would land where --tensorboard writes (the
// directory itself, or its train/ or validation/, which it makes) is
// refused before training: the clash was found only at the end, when the
// directories were there and the file could not be written.
func TestTrainRefusesOutputsInTheTensorBoardDir(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		flag, path string // DIR: the log directory
		there      bool   // DIR exists, from an earlier run, empty
	}{
		{"--save", "DIR", false},
		{"--plot", "DIR", false},
		{"--checkpoint", "DIR/train", true},
		{"--json", "DIR/validation", true},
		{"--csv-log", "DIR/./train", true},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			dir := t.TempDir()
			logs := filepath.Join(dir, "logs")
			if tc.there {
				if err := os.Mkdir(logs, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			path := strings.ReplaceAll(filepath.FromSlash(tc.path), "DIR", logs)
			r := runTrain(t, append(quick, "--seed", "1", "--tensorboard", logs, tc.flag, path)...)
			want := fmt.Sprintf("%s %s is where --tensorboard %s writes its logs", tc.flag, path, logs)
			if r.err == nil || !strings.Contains(r.err.Error(), want) {
				t.Fatalf("error %v, want one saying %q", r.err, want)
			}
			if r.stdout != "" {
				t.Errorf("printed before the error, so the check came late:\n%s", r.stdout)
			}
			want = map[bool]string{false: "", true: "logs"}[tc.there]
			if names := dirNamesOf(t, dir); strings.Join(names, " ") != want {
				t.Errorf("the refused run left %v behind", names)
			}
			if tc.there {
				if names := dirNamesOf(t, logs); len(names) != 0 {
					t.Errorf("the refused run left %v in the log directory", names)
				}
			}
		})
	}
}
