// Package mpitest is what the tests that run jobs under mpirun share:
// finding mpirun and Open MPI, and skipping visibly without them, or
// failing when GOKERAS_REQUIRE_MPI=1 (as .ci/run sets it); and starting a
// job with an environment and a session directory of its own.
package mpitest

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/distribute/mpi"
)

// RequireVar names the variable that turns a missing mpirun or Open MPI
// into a test failure instead of a skip.
const RequireVar = "GOKERAS_REQUIRE_MPI"

// Need returns mpirun's path once it has checked that Open MPI loads, or
// skips t (fails it when RequireVar is 1) saying what is missing.
func Need(t testing.TB) string {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv(RequireVar) == "1" {
			t.Fatalf("%s=1 but %s", RequireVar, why)
		}
		t.Skipf("skipped: %s (set %s=1 to fail instead)", why, RequireVar)
	}
	mpirun, err := exec.LookPath("mpirun")
	if err != nil {
		missing("mpirun is not on PATH: " + mpi.InstallHint)
	}
	if _, err := mpi.Load(); err != nil {
		missing(err.Error())
	}
	return mpirun
}

// Command returns mpirun (from Need) set to start np processes of prog
// with args, as root too and with more processes than cores, passing the
// variables named in pass on to every process (mpirun's -x) and mpiArgs
// to mpirun itself. The job's environment is this process's, less the
// variables a launcher sets (a test that runs under mpirun starts jobs of
// its own), plus JobEnv's session directory; add to cmd.Env, not replace it.
func Command(t testing.TB, ctx context.Context, mpirun string, np int, pass, mpiArgs []string, prog string, args ...string) *exec.Cmd {
	t.Helper()
	argv := []string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np)}
	for _, v := range pass {
		argv = append(argv, "-x", v)
	}
	argv = append(append(append(argv, mpiArgs...), prog), args...)
	cmd := exec.CommandContext(ctx, mpirun, argv...)
	cmd.Env = JobEnv(t)
	return cmd
}

// JobEnv is the environment for one mpirun job: this process's, less the
// variables a launcher sets (mpi.LaunchVars), with a session directory of
// the job's own. Open MPI keeps a job's files (ORTE's session directory,
// PMIx's sockets) under TMPDIR, named after the host, the user and
// mpirun's process ID; jobs run in parallel by different test binaries
// sometimes collided there ("File exists"). The directory is short, since
// it holds Unix sockets, whose paths are limited to 107 bytes, and is
// removed when t ends.
func JobEnv(t testing.TB) []string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ompi")
	if err != nil {
		t.Fatalf("a session directory for mpirun: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	launch := mpi.LaunchVars()
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(launch, name) && name != "TMPDIR" && name != sessionVar {
			env = append(env, kv)
		}
	}
	return append(env, "TMPDIR="+dir, sessionVar+"="+dir)
}

// sessionVar is Open MPI 4's setting for the base of its session
// directory, which is TMPDIR unless set.
const sessionVar = "OMPI_MCA_orte_tmpdir_base"
