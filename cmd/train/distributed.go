package main

import (
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/gokeras/gokeras/distribute"
	"github.com/gokeras/gokeras/distribute/mpi"
	"github.com/gokeras/gokeras/internal/sys/collective"
)

// launchHint says how to start train for --distributed.
const launchHint = "launch one train per replica with an MPI launcher: mpirun -np 2 train --distributed ... " +
	"(as root mpirun also wants --allow-run-as-root, and more processes than cores --oversubscribe; under Slurm: srun)"

// distributedFlags refuses --distributed-timeout without --distributed,
// or below 0.
func (c config) distributedFlags() error {
	switch {
	case c.distTimeoutSet && !c.distributed:
		return usagef("--distributed-timeout applies to --distributed only: add --distributed (and launch with mpirun) or drop --distributed-timeout")
	case c.distTimeout < 0:
		return usagef("--distributed-timeout must not be negative, got %v: give a duration such as 30m, or 0 to wait for ever", c.distTimeout)
	}
	return nil
}

// rankZeroOnly drops, on ranks other than 0, the outputs that only rank 0
// writes: --plot, --csv-log, --json and --tensorboard. --save and
// --checkpoint stay: nn writes them on rank 0 only, and every rank must
// run the same callbacks.
func (c *config) rankZeroOnly() {
	c.ux.plot, c.csvLog, c.jsonOut, c.tensorboard = "", "", "", ""
}

// startDistributed starts MPI for --distributed: every process of the job
// is a replica, on /CPU:0 unless --device says otherwise (/GPU:0: one GPU
// per process, summed by NCCL), with rank 0's seed when --seed is not
// given.
func startDistributed(cfg *config) (*distribute.MultiWorkerStrategy, error) {
	if !mpi.InMPIRun() {
		return nil, usagef("--distributed: train was not started by an MPI launcher; %s", launchHint)
	}
	s, err := distribute.MultiWorker()
	if err != nil {
		return nil, fmt.Errorf("--distributed: %w", err)
	}
	s.SetTimeout(cfg.distTimeout) // before the first collective
	if err := agreeOnFlags(s, cfg.flags); err != nil {
		return nil, fmt.Errorf("--distributed: %w", err)
	}
	if cfg.seedFromClock {
		b := binary.LittleEndian.AppendUint64(nil, cfg.seed)
		if err := s.BcastBytes(b, 0); err != nil {
			return nil, fmt.Errorf("--distributed: taking rank 0's seed: %w", err)
		}
		cfg.seed = binary.LittleEndian.Uint64(b)
	}
	if cfg.device == "" {
		cfg.device = "/CPU:0"
	}
	return s, nil
}

// printDistributed says, before training, how many processes share the
// global batch and how long a collective waits for them (the strategy's
// timeout, --distributed-timeout).
func printDistributed(out io.Writer, s *distribute.MultiWorkerStrategy, batch int) {
	wait := "time out after " + s.Timeout().String()
	if s.Timeout() == 0 {
		wait = "wait for ever"
	}
	fmt.Fprintf(out, "Distributed: %d processes share the global batch of %d; collectives %s (--distributed-timeout)\n", s.Size(), batch, wait)
}

// printJobThroughput writes the training samples per second of the whole
// job: the global batches of the epochs run over their wall time.
func printJobThroughput(out io.Writer, s *distribute.MultiWorkerStrategy, timer *epochTimer, batch, samples int) {
	var trained int
	var took time.Duration
	for _, e := range timer.epochs {
		trained += min(e.steps*batch, samples)
		took += e.elapsed
	}
	if took <= 0 {
		return
	}
	fmt.Fprintf(out, "Distributed: %d processes, global batch %d: %.0f samples/s\n", s.Size(), batch, float64(trained)/took.Seconds())
}

// agreeOnFlags fails on every rank unless all of them were started with
// the flags rank 0 was: a flag given to some ranks only (--early-stopping,
// which stops one rank and leaves the others waiting; --resume, which
// makes the ranks exchange different data; --checkpoint on a rank that
// does not write it) is named before anything else happens. flags holds
// every flag's value, the defaults included.
func agreeOnFlags(s *distribute.MultiWorkerStrategy, flags map[string]string) error {
	var desc []string
	for _, name := range slices.Sorted(maps.Keys(flags)) {
		desc = append(desc, "--"+name+": "+strconv.Quote(flags[name]))
	}
	return collective.Agree(s, desc, "start every rank with the same flags (one mpirun command line starts them all)")
}
