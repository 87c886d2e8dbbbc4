// Package distribute trains one model on several processes at once, data
// parallel, with the strategies of Keras' tf.distribute. A strategy is
// given to Compile; Fit then splits each global batch between the
// replicas, averages their gradients before each update, and reports the
// figures of the whole batch:
//
//	strategy, err := distribute.MultiWorker() // MPI: one process per replica
//	if err != nil { ... }
//	defer strategy.Close()
//	err = model.Compile(opt, loss, ms, nn.OnDevice("/CPU:0"), nn.WithStrategy(strategy))
//	hist, err := model.Fit(ctx, data, nn.BatchSize(64)) // the global batch
//
// and launched with mpirun, one process per replica:
//
//	mpirun -np 2 ./prog
//
// N processes then train what one process trains with the same batch
// size: nn.WithStrategy says what runs on which rank. BatchNormalization
// normalizes each replica's shard with its own statistics, and its moving
// mean and variance are the mean over the replicas, as Keras reads them,
// so every replica holds the same weights after every step. A replica
// whose context is cancelled stops every replica's Fit, or Evaluate, after
// the same step. Saves come from rank 0; loads read the file on every rank
// and check that the replicas read the same; a checkpoint taken on rank 0
// resumes the whole job (see nn.Sequential.SaveCheckpoint). Open MPI is
// loaded at run time by package distribute/mpi, so building needs no MPI.
//
// A replica that exits stops the job: mpirun ends the others. One that
// hangs makes the others stop after the strategy's timeout (SetTimeout,
// DefaultTimeout; train's --distributed-timeout), with a message that says
// so. The machines overlap the all-reduce with the backward pass, in
// buckets as PyTorch DDP does. On GPUs (one per process, /GPU:0 in each)
// the gradients are summed in device memory by NCCL (package
// distribute/nccl), started over MPI, on a stream beside the step's; that
// path has run on the emulated GPU of package device/cuda only (with the
// host's all-reduce in NCCL's place), not yet on GPUs. Not done yet: runs
// across several machines (only one machine was tested).
package distribute
