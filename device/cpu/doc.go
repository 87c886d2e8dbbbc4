// Package cpu is gokeras' CPU backend: it runs the plans of the plan
// compiler on host memory, the way device/cuda runs them on a GPU.
//
// It registers itself with package device when imported (package nn
// imports it, so every gokeras program has /CPU:0):
//
//	import _ "github.com/gokeras/gokeras/device/cpu"
//
// Matrix products go to package blas, which picks how to multiply (the
// AVX-512 or AVX2 kernels, a native BLAS, or gonum). The inputs, the
// weights and the optimizer's slots are used where they are, never copied.
// The bias is added inside the forward product. Every update rule that
// works value by value is folded into the product that computes a weight's
// gradient (and into a bias's column sums): plain SGD makes the weights the
// product's output when the product sums at most plan.FoldRows rows; the
// other rules, and plain SGD over deeper products, compute the gradient a
// strip at a time and apply optim.Update.Apply to each strip while it is in
// the caches. An update that needs the whole gradient first (clipping by
// norm or by global norm), and every update of a data-parallel step (which
// must see the all-reduced gradients), runs as a step of its own after the
// gradient exists.
//
// Graphs with ops the plan compiler does not know run on gorgonia's tape
// machine, with a one-line warning; MachineOptions.Reference asks for the
// tape machine outright (tests compare the two).
package cpu
