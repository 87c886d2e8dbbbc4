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
// # Zero values and defaults
//
// A hyperparameter whose Keras default is not 0 but which Keras lets be 0
// (Adam's beta_1, RMSprop's and Adadelta's rho, every epsilon, Adagrad's
// initial_accumulator_value) is a Float: left unset it is Keras' default,
// and F sets it to any value, 0 included, which the optimizer then uses
// exactly:
//
//	optim.AdamConfig{}                          // beta_1 0.9, Keras' default
//	optim.AdamConfig{Beta1: optim.F(0)}         // beta_1 0: m = g
//	optim.RMSpropConfig{Rho: optim.F(0)}        // rho 0: the last gradient's square alone
//
// Fields whose Keras default is 0 (SGD's and RMSprop's Momentum, the
// Options) are plain float64s, 0 being that default. LearningRate is a
// float64 too, 0 meaning the optimizer's default rate; a rate of exactly
// 0, which Keras allows (the weights then stay put), is SetLearningRate(0)
// after New. AdamW's weight decay of 0 is FromConfig's (NewAdam makes the
// same updates under Adam's name).
//
// Nothing is replaced silently: Config, and the Keras config ConfigOf
// gives (Keras' get_config), hold the values in use, defaults filled in,
// and FromConfig reads an argument given as 0 as 0, an argument left out
// as Keras' default, so a saved optimizer loads as it was.
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
