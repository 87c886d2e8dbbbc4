package main

import (
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestTrainJSONToStdoutAlone checks that with --json - stdout holds the
// summary and nothing else at every --verbose that prints, so that
// train --json - | jq works, and that the progress, the summary of the
// model and the report go to stderr instead.
func TestTrainJSONToStdoutAlone(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		verbose int
		tail    []*regexp.Regexp // the stderr lines after "Epoch 1/1"
	}{
		{1, []*regexp.Regexp{epochLine, epochLine, testLine, timeLine}},
		{2, []*regexp.Regexp{epochLine2, epochLine2, testLine, timeLine}},
	} {
		t.Run("verbose "+strconv.Itoa(tc.verbose), func(t *testing.T) {
			r := runTrain(t, "--device=/CPU:0", "--synthetic", "--synthetic-samples", "40", "--batch-size", "8", "--steps-per-epoch", "2",
				"--epochs", "1", "--seed", "5", "--verbose", strconv.Itoa(tc.verbose), "--json", "-")
			if r.err != nil {
				t.Fatalf("%v\n%s", r.err, r.stderr)
			}
			dec := json.NewDecoder(strings.NewReader(r.stdout))
			dec.DisallowUnknownFields()
			var s summary
			if err := dec.Decode(&s); err != nil {
				t.Fatalf("stdout is not the JSON summary alone: %v in\n%s", err, r.stdout)
			}
			if tok, err := dec.Token(); !errors.Is(err, io.EOF) {
				t.Errorf("stdout goes on after the summary (%v, %v):\n%s", tok, err, r.stdout)
			}
			if len(s.Epochs) != 1 || s.Epochs[0].Steps == nil || *s.Epochs[0].Steps != 2 || s.Flags["json"] != "-" ||
				s.Flags["verbose"] != strconv.Itoa(tc.verbose) || s.Seed != 5 {
				t.Errorf("summary %+v, want 1 epoch of 2 steps with --json - and --verbose %d", s, tc.verbose)
			}

			lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
			checkHeader(t, lines, 40, 8)
			checkSummary(t, r.stderr)
			checkTail(t, lines, "Epoch 1/1", tc.tail...)
			if strings.Contains(r.stderr, `"epochs"`) {
				t.Errorf("the JSON went to stderr too:\n%s", r.stderr)
			}
		})
	}
	// The lines a flag asks for by name are for people too.
	r := runTrain(t, "--device=/CPU:0", "--synthetic", "--synthetic-samples", "40", "--batch-size", "8", "--steps-per-epoch", "2",
		"--epochs", "1", "--seed", "5", "--verbose", "0", "--trace", "--json", "-")
	if r.err != nil {
		t.Fatalf("%v\n%s", r.err, r.stderr)
	}
	var s summary
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("--trace --json -: stdout is not the JSON summary alone: %v in\n%s", err, r.stdout)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) || r.stderr == "" {
		t.Errorf("--trace --json -: stdout\n%s\nstderr\n%s\nwant the JSON alone on stdout, the trace on stderr", r.stdout, r.stderr)
	}
}
