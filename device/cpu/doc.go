// Package cpu is gokeras' CPU backend: it runs the plans of the plan
// compiler on host memory, the way device/cuda runs them on a GPU.
//
// It registers itself with package device when imported (package nn
// imports it, so every gokeras program has /CPU:0):
//
//	import _ "github.com/gokeras/gokeras/device/cpu"
//
// Matrix products go to package blas, which picks how to multiply (the
// AVX-512 kernels, a native BLAS, or gonum). The inputs, the weights and
// the optimizer's slots are used where they are, never copied; the
// optimizer's update is folded into the product that computes a weight's
// gradient (plain SGD and momentum), or applied with optim.Update.Apply
// once the gradient exists (the other rules).
//
// Graphs with ops the plan compiler does not know run on gorgonia's tape
// machine, with a one-line warning; MachineOptions.Reference asks for the
// tape machine outright (tests compare the two).
package cpu
