package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gokeras/gokeras/datasets/cifar10"
	"github.com/gokeras/gokeras/distribute/mpi"
)

// mpiLaunchVars are the variables MPI launchers set (mpi.InMPIRun): the
// tests' own processes must not inherit them.
var mpiLaunchVars = []string{"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"}

// Started by hand, --distributed refuses at once and says how to launch;
// flags it does not take yet are refused by name.
func TestTrainDistributedNeedsMPIRun(t *testing.T) {
	isolate(t)
	for _, v := range mpiLaunchVars {
		t.Setenv(v, "")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--distributed", "--synthetic"}, "mpirun -np 2 train --distributed"},
		{[]string{"--distributed", "--synthetic", "--save", "w.safetensors"}, "--save does not go with --distributed yet"},
		{[]string{"--distributed", "--benchmark"}, "--benchmark does not go with --distributed yet"},
	} {
		r := runTrain(t, tc.args...)
		var u *usageError
		if r.err == nil || !strings.Contains(r.err.Error(), tc.want) || !errors.As(r.err, &u) {
			t.Errorf("%v: error %v, want a usage error containing %q", tc.args, r.err, tc.want)
		}
		if r.stdout != "" {
			t.Errorf("%v: printed %q before the error", tc.args, r.stdout)
		}
	}
}

// mpirun -np 2 train --distributed prints one Keras progress stream, rank
// 0's, and ends with the samples per second of the whole job.
func TestTrainDistributedUnderMPIRun(t *testing.T) {
	mpirun, err := exec.LookPath("mpirun")
	if err == nil {
		_, err = mpi.Load()
	}
	if err != nil {
		if os.Getenv("GOKERAS_REQUIRE_MPI") == "1" {
			t.Fatalf("GOKERAS_REQUIRE_MPI=1 but %v", err)
		}
		t.Skipf("skipped: %v (set GOKERAS_REQUIRE_MPI=1 to fail instead)", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2", "-x", asTrainEnv,
		os.Args[0], "--device=/CPU:0", "--synthetic", "--synthetic-samples", "1000", "--epochs", "1", "--steps-per-epoch", "20",
		"--batch-size", "32", "--seed", "1", "--distributed")
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !slices.Contains(mpiLaunchVars, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, asTrainEnv+"=1", cifar10.HomeEnv+"="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("mpirun -np 2 train --distributed: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, once := range []string{"Epoch 1/1", "Device: /CPU:0", "Test loss: ", "Total time: "} {
		if n := strings.Count(text, once); n != 1 {
			t.Errorf("%q %d times in the output, want once (rank 0's):\n%s", once, n, text)
		}
	}
	if !strings.Contains(text, "20/20 [==============================]") {
		t.Errorf("no finished progress bar of 20 steps:\n%s", text)
	}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, "Distributed: 2 processes, global batch 32: ") || !strings.HasSuffix(last, " samples/s") {
		t.Errorf("last line %q, want the job's samples/s", last)
	}
	t.Logf("mpirun -np 2 train --distributed: %v", time.Since(start).Round(time.Millisecond))
}
