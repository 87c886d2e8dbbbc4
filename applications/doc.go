// Package applications makes well-known models, ready to compile and
// train, as keras.applications and Keras' examples do: ResNetV1 is the
// residual network of Keras' cifar10_resnet example.
//
//	model, err := applications.ResNetV1(20, []int{32, 32, 3}, 10)
//	err = model.Compile(adam, losses.CategoricalCrossentropy{}, []metrics.Metric{&metrics.Accuracy{}})
//
// The models are functional models (package nn's NewModel): Summary shows
// their graph, and their layers can be read, reused or frozen like any
// model's.
package applications
