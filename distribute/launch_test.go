package distribute

import (
	"strings"
	"testing"
)

func TestLaunchedSize(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		size int
		want string // "" for no error
	}{
		{"by hand", nil, 1, ""},
		{"mpirun -np 2", map[string]string{"OMPI_COMM_WORLD_SIZE": "2"}, 2, ""},
		{"srun --mpi=pmix -n 4", map[string]string{"PMIX_RANK": "1", "SLURM_STEP_NUM_TASKS": "4"}, 4, ""},
		{"plain srun -n 4", map[string]string{"SLURM_STEP_NUM_TASKS": "4"}, 1, "srun --mpi=pmix"},
		{"a batch step of one", map[string]string{"SLURM_STEP_NUM_TASKS": "1", "SLURM_NTASKS": "8"}, 1, ""},
		{"another MPI's launcher", map[string]string{"PMI_SIZE": "3"}, 1, "started 3 processes (PMI_SIZE), but MPI sees 1"},
		{"unreadable", map[string]string{"OMPI_COMM_WORLD_SIZE": "x"}, 1, ""},
	}
	for _, tc := range cases {
		err := launchedSize(func(k string) string { return tc.env[k] }, tc.size)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
}
