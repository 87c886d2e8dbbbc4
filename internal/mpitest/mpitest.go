// Package mpitest is what the tests that run jobs under mpirun share:
// finding mpirun and Open MPI, and skipping visibly without them, or
// failing when GOKERAS_REQUIRE_MPI=1 (as .ci/run sets it).
package mpitest

import (
	"os"
	"os/exec"
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
