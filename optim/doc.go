// Package optim holds the optimizers that update a model's weights from its
// gradients, with the update rules, names and defaults of Keras 2.
//
// # Making optimizers
//
// An optimizer is made by New<Class> from a config struct whose fields
// are Keras' keyword arguments and whose zero values are Keras' defaults,
// the idiom losses and metrics use for their structs; the constructor
// checks the numbers and says what is wrong:
//
//	sgd, err := optim.NewSGD(optim.SGDConfig{})                                 // lr 0.01
//	sgd, err := optim.NewSGD(optim.SGDConfig{LearningRate: 0.1, Momentum: 0.9})
//	adam, err := optim.NewAdam(optim.AdamConfig{LearningRate: 0.01})
//	rms, err := optim.NewRMSprop(optim.RMSpropConfig{Centered: true})
//
// NewAdamW, NewAdagrad, NewAdadelta, NewAdamax and NewNadam make the
// others. Every config embeds Options, the arguments every Keras optimizer
// takes: clipping by norm or value, decoupled weight decay, and a Schedule
// giving each step's learning rate (ExponentialDecay, CosineDecay, ...):
//
//	optim.NewAdam(optim.AdamConfig{Options: optim.Options{ClipNorm: 1,
//		Schedule: optim.CosineDecay{InitialLearningRate: 1e-3, DecaySteps: 10000}}})
//
// Get makes one with Keras' defaults by the name compile(optimizer="...")
// takes ("sgd", "adam", "rmsprop", ...; Names lists them), as losses.Get
// and metrics.Get do for theirs.
//
// # State
//
// An optimizer keeps its own state (momentum, Adam's moments) per variable,
// keyed by the variable's name, so one optimizer serves one model. Each
// update rule is defined once, by Update.Apply.
package optim
