// Package plan is gokeras' one plan compiler and the machine that runs a
// plan on any backend. The CPU backend (device/cpu: host memory, the
// AVX-512 and AVX2 kernels or a BLAS) and the CUDA backend (device/cuda:
// device memory, cuBLAS, its kernels) are peers that implement Backend;
// everything else, from the graph walk to the binding of gradients and
// reads, is here, without build tags or cgo.
//
// # Compiling
//
// Compile walks a gorgonia graph of package ops' ops once, in execution
// order, and turns each node into Steps over Buffers: products (Gemm),
// a bias and an activation (BiasAct), softmax, reductions, patches and
// pooling, normalizations, merges, transposes, recurrences, losses and
// metrics. Each step names its operands and results by buffer index at
// positions fixed per Kind (see the Kind constants); a reshape shares its
// input's buffer; a node the compiler does not know is an error naming it.
// The gradients of the learnables are buffers too (Plan.Grads).
//
// The fusions a backend is good at are capabilities the compiler asks it
// for (Capabilities). After the walk, passes rewrite the steps where the
// backend says so, in this order:
//
//   - pointwise: a 1×1 convolution with strides 1 and no padding reads
//     its images as its patches, so it becomes a Dense layer's products;
//   - convolutions: other convolutions' patches and products become Conv
//     steps on the backend's grids (Capabilities.Conv), the patches never
//     written;
//   - normGradients: BatchNormalization's gamma gradient joins its input
//     gradient's step (GammaInNormGrad);
//   - normBiasSums: the gradient of a bias just before it (the column sums
//     of that input gradient) joins that step too (BiasInNormGrad);
//   - moments: its batch variance joins its batch mean's step
//     (MomentsInOneStep);
//   - reluFolds: a ReLU that only follows a step is applied by that step
//     (FoldsReLU);
//   - normAdds: a residual connection's add after a BatchNormalization
//     (and the ReLU folded into it) joins the normalization's step
//     (AddInBatchNorm);
//   - reluGradFolds: a ReLU's gradient is applied by the step that
//     computes its incoming gradient (FoldsReLUGrad).
//
// Each pass keeps the values the steps compute, and tests check each one
// against the steps without it, bit for bit where the arithmetic is the
// same.
//
// # Running
//
// A Machine binds a plan to a Backend: it allocates every buffer once
// (Temp buffers whose lifetimes do not overlap share memory:
// lifetimes.go), copies the inputs in before each run and the reads out
// after, and drives the backend through nn's step protocol
// (driver.Machine, driver.Trainer). Training runs TrainingSteps: the
// plan's steps with each learnable's update placed once its gradient
// exists, folded into the step that computes the gradient where the
// backend offers that (GradUpdate); data-parallel training keeps the
// updates apart and puts an all-reduce of the gradients before them
// (ReducedTrainingSteps), or in buckets that overlap the backward pass
// (OverlappedTrainingSteps).
//
// Built with the tag steptimes, machines time each step on the host and
// print the step kinds' times (steptimes.go; bench/step-profile.sh).
//
// Everything here is tested on machines without a GPU: the steps run on
// the host through each op's own Do, against gorgonia's tape machine.
package plan
