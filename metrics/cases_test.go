package metrics

import (
	"math"
	"strings"
	"testing"
)

// metricCase is one batch given to a fresh metric and the Result it must
// give, or the error Update must return.
type metricCase struct {
	name      string
	metric    Metric
	labels    []float32
	labelCols int
	preds     []float32
	predCols  int
	want      float64
	wantErr   string // a part of Update's error; "" when the batch is fine
}

// runCases checks each case: its Result within 1e-9, or its error, which
// must name the metric.
func runCases(t *testing.T, cases []metricCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.metric.Update(tc.labels, tc.labelCols, tc.preds, tc.predCols)
			switch {
			case tc.wantErr != "" && err == nil:
				t.Fatalf("Update accepted the batch: %s = %v", tc.metric.Name(), tc.metric.Result())
			case tc.wantErr != "":
				if !strings.Contains(err.Error(), tc.wantErr) || !strings.HasPrefix(err.Error(), tc.metric.Name()+": ") {
					t.Errorf("error %q does not start with the metric's name and say %q", err, tc.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case !(math.Abs(tc.metric.Result()-tc.want) <= 1e-9):
				t.Errorf("%s = %.10g, want %.10g", tc.metric.Name(), tc.metric.Result(), tc.want)
			}
		})
	}
}
