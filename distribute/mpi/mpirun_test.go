package mpi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests in this file start jobs of this test binary, under mpirun or
// alone, whose processes run TestMPIWorker with workerVar naming what to
// do.
const workerVar = "GOKERAS_MPI_TEST_WORKER"

// requireVar, set to 1, turns the skips of a machine without Open MPI
// into failures: CI installs Open MPI and sets it.
const requireVar = "GOKERAS_REQUIRE_MPI"

// jobTimeout bounds each mpirun job: a job that hangs fails the test.
const jobTimeout = 60 * time.Second

// needMPI returns mpirun's path and the library, or skips the test (fails
// it when GOKERAS_REQUIRE_MPI=1) saying what is missing.
func needMPI(t *testing.T) (string, *Lib) {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv(requireVar) == "1" {
			t.Fatalf("%s=1 but %s", requireVar, why)
		}
		t.Skipf("skipped: %s (set %s=1 to fail instead)", why, requireVar)
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		missing("mpirun is not on PATH: " + InstallHint)
	}
	lib, err := Load()
	if err != nil {
		missing(err.Error())
	}
	return mpirun, lib
}

// job runs this test binary in worker mode mode, under mpirun with np
// processes, or alone for np 0, and returns the output, the error of the
// run and how long it took.
func job(t *testing.T, mpirun string, np int, mode string) (string, error, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	defer cancel()
	test := []string{os.Args[0], "-test.run=^TestMPIWorker$", "-test.count=1", "-test.timeout=50s"}
	var cmd *exec.Cmd
	if np > 0 {
		args := append([]string{"--allow-run-as-root", "--oversubscribe", "-np", fmt.Sprint(np), "-x", workerVar}, test...)
		cmd = exec.CommandContext(ctx, mpirun, args...)
	} else {
		cmd = exec.CommandContext(ctx, test[0], test[1:]...)
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(launchVars, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, workerVar+"="+mode)
	if np > 0 {
		cmd.Env = append(cmd.Env, sessionDirEnv(t)...)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("%v did not end within %v: a hang\n%s", cmd.Args, jobTimeout, out.String())
	}
	return out.String(), err, took
}

// sessionDirEnv gives an mpirun job a session directory of its own, as
// internal/sys/mpitest.JobEnv does for the other packages' jobs (this package's
// tests cannot import it: it imports this package). The variables come
// last, so they win over the inherited TMPDIR.
func sessionDirEnv(t *testing.T) []string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ompi")
	if err != nil {
		t.Fatalf("a session directory for mpirun: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return []string{"TMPDIR=" + dir, "OMPI_MCA_orte_tmpdir_base=" + dir}
}

func TestMPILoad(t *testing.T) {
	_, lib := needMPI(t)
	if !strings.Contains(lib.Version(), "Open MPI") {
		t.Errorf("Version() = %q, want Open MPI's", lib.Version())
	}
	t.Logf("loaded %v", lib)
}

// Two and three processes: sums, broadcasts and the rest on each rank,
// checked by the worker; here, that every rank said so and the job exited
// 0.
func TestMPIRunCollectives(t *testing.T) {
	mpirun, _ := needMPI(t)
	for _, np := range []int{2, 3} {
		out, err, took := job(t, mpirun, np, "collectives")
		if err != nil {
			t.Fatalf("mpirun -np %d: %v\n%s", np, err, out)
		}
		for r := range np {
			if want := fmt.Sprintf("worker rank %d of %d: ok", r, np); !strings.Contains(out, want) {
				t.Errorf("mpirun -np %d: no %q in the output:\n%s", np, want, out)
			}
		}
		t.Logf("mpirun -np %d: %v", np, took.Round(time.Millisecond))
	}
}

// A rank that exits early (status 3) or is killed (SIGKILL) before a
// collective makes mpirun stop the job and exit non-zero, rather than
// leave rank 0 waiting in MPI_Allreduce.
func TestMPIRankExitsEarly(t *testing.T) {
	mpirun, _ := needMPI(t)
	for _, mode := range []string{"exit-early", "killed"} {
		out, err, took := job(t, mpirun, 2, mode)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("mpirun with rank 1 %s: want a non-zero exit, got %v\n%s", mode, err, out)
		}
		if strings.Contains(out, "worker rank 0 of 2: ok") {
			t.Errorf("%s: rank 0 finished its all-reduce without rank 1:\n%s", mode, out)
		}
		t.Logf("%s: mpirun exited %d after %v", mode, exit.ExitCode(), took.Round(time.Millisecond))
	}
}

// Started by hand, not by mpirun, a process is a world of one (Open MPI's
// singleton mode): rank 0 of 1, sums of its own numbers.
func TestMPISingleton(t *testing.T) {
	mpirun, _ := needMPI(t)
	out, err, took := job(t, mpirun, 0, "singleton")
	if err != nil || !strings.Contains(out, "worker rank 0 of 1: ok") {
		t.Fatalf("singleton: %v\n%s", err, out)
	}
	t.Logf("singleton: %v", took.Round(time.Millisecond))
}

// TestMPIWorker is one process of the jobs above; run as a test it skips.
func TestMPIWorker(t *testing.T) {
	mode := os.Getenv(workerVar)
	if mode == "" {
		t.Skip("skipped: a process of the jobs of TestMPIRunCollectives, TestMPIRankExitsEarly and TestMPISingleton, not a test by itself")
	}
	if got, want := InMPIRun(), mode != "singleton"; got != want {
		t.Fatalf("InMPIRun() = %v, want %v", got, want)
	}
	lib, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	c, err := lib.Init()
	if err != nil {
		t.Fatal(err)
	}
	rank, size := c.Rank(), c.Size()
	switch mode {
	case "collectives":
		workerCollectives(t, lib, c)
	case "singleton":
		buf := []float32{1.5, -2}
		if err := c.AllreduceSum(buf); err != nil || size != 1 || rank != 0 || buf[0] != 1.5 || buf[1] != -2 {
			t.Fatalf("singleton: rank %d of %d, AllreduceSum of [1.5 -2] = %v, %v", rank, size, buf, err)
		}
	case "exit-early", "killed":
		if rank == 1 && mode == "exit-early" {
			os.Exit(3)
		}
		if rank == 1 {
			p, err := os.FindProcess(os.Getpid())
			if err == nil {
				err = p.Kill()
			}
			t.Fatalf("rank 1 still alive after killing itself: %v", err)
		}
		buf := []float32{1}
		if err := c.AllreduceSum(buf); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unknown %s=%s", workerVar, mode)
	}
	if err := c.Finalize(); err != nil {
		t.Fatal(err)
	}
	if err := c.Barrier(); !errors.Is(err, ErrFinalized) {
		t.Errorf("Barrier after Finalize: want ErrFinalized, got %v", err)
	}
	if _, err := lib.Init(); !errors.Is(err, ErrFinalized) {
		t.Errorf("Init after Finalize: want ErrFinalized, got %v", err)
	}
	if !t.Failed() {
		fmt.Printf("worker rank %d of %d: ok\n", rank, size)
	}
}

func workerCollectives(t *testing.T, lib *Lib, c *Comm) {
	rank, size := c.Rank(), c.Size()
	if size < 2 || rank < 0 || rank >= size {
		t.Fatalf("rank %d of %d", rank, size)
	}
	if _, err := lib.Init(); !errors.Is(err, ErrInitialized) {
		t.Errorf("a second Init: want ErrInitialized, got %v", err)
	}

	// Sums of rank-dependent vectors, exact in float32: element i of
	// rank r is (r+1)·(i mod 4096) - r/2, so the sum over ranks is
	// size(size+1)/2·(i mod 4096) - size(size-1)/4. A million elements
	// go beyond Open MPI's eager limits to its large-message protocol.
	for _, n := range []int{1, 7, 1 << 20} {
		buf := make([]float32, n)
		for i := range buf {
			buf[i] = float32((rank+1)*(i%4096)) - float32(rank)/2
		}
		if err := c.AllreduceSum(buf); err != nil {
			t.Fatal(err)
		}
		for i, got := range buf {
			want := float32(size*(size+1)/2*(i%4096)) - float32(size*(size-1))/4
			if got != want {
				t.Fatalf("rank %d: AllreduceSum of %d: element %d is %v, want %v", rank, n, i, got, want)
			}
		}
	}
	if err := c.AllreduceSum(nil); err != nil {
		t.Errorf("AllreduceSum of nothing: %v", err)
	}

	// From goroutines that Go runs on other threads than the MPI thread.
	var wg sync.WaitGroup
	sums := make([][]float32, 8)
	for g := range sums {
		wg.Go(func() {
			sums[g] = []float32{float32(g), 1}
			if err := c.AllreduceSum(sums[g]); err != nil {
				t.Error(err)
			}
		})
		wg.Wait() // the same order on every rank: collectives must match
	}
	for g, s := range sums {
		if s[0] != float32(g*size) || s[1] != float32(size) {
			t.Errorf("rank %d: sum from goroutine %d = %v, want [%d %d]", rank, g, s, g*size, size)
		}
	}

	// Broadcasts from rank 0 and from the last rank.
	for _, root := range []int{0, size - 1} {
		f := make([]float32, 1000)
		b := make([]byte, 33)
		if rank == root {
			for i := range f {
				f[i] = float32(i)*0.25 + float32(root)
			}
			copy(b, fmt.Sprintf("hello from rank %d", root))
		}
		if err := c.Bcast(f, root); err != nil {
			t.Fatal(err)
		}
		if err := c.BcastBytes(b, root); err != nil {
			t.Fatal(err)
		}
		for i, got := range f {
			if want := float32(i)*0.25 + float32(root); got != want {
				t.Fatalf("rank %d: Bcast from %d: element %d is %v, want %v", rank, root, i, got, want)
			}
		}
		if got, want := string(bytes.TrimRight(b, "\x00")), fmt.Sprintf("hello from rank %d", root); got != want {
			t.Errorf("rank %d: BcastBytes from %d: %q, want %q", rank, root, got, want)
		}
	}
	if err := c.Bcast([]float32{1}, size); err == nil || !strings.Contains(err.Error(), "not a rank") {
		t.Errorf("Bcast from rank %d of %d: want a not-a-rank error, got %v", size, size, err)
	}
	if err := c.Barrier(); err != nil {
		t.Fatal(err)
	}

	// Open MPI must have left Go's signal handlers alone: a nil
	// dereference is still a Go panic, which recover catches.
	recovered := func() (r any) {
		defer func() { r = recover() }()
		var p *[4]float32
		return p[1]
	}()
	if recovered == nil {
		t.Error("a nil dereference after Init did not panic")
	}
}
