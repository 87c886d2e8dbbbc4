// Package layers holds the building blocks of a gokeras model, with Keras'
// names, arguments and defaults: Input, Dense, Activation, Flatten,
// Reshape and Permute; the convolutions Conv2D and Conv1D; the poolings (MaxPooling2D,
// AveragePooling2D, their 1D and global forms); Dropout;
// BatchNormalization and LayerNormalization; Embedding; the recurrent
// layers SimpleRNN, LSTM and GRU; the attention layers MultiHeadAttention,
// Attention and AdditiveAttention; the merge layers
// (Add, Concatenate, Dot and the others); ZeroPadding2D, Cropping2D and
// UpSampling2D; Identity and the activation layers ReLU, LeakyReLU, ELU
// and PReLU (NewReLU, NewLeakyReLU, NewELU, NewPReLU); the preprocessing layers
// Rescaling, Normalization (with Adapt), Resizing and CenterCrop and the
// random augmentation layers RandomFlip, RandomTranslation, RandomZoom,
// RandomRotation, RandomBrightness, RandomContrast and RandomCrop; and the
// activations and weight initializers they take. Images and sequences
// are channels last: (None, height, width, channels), (None, steps,
// channels).
//
// # Making layers
//
// A layer is made by a function named after its Keras class, which takes
// the arguments Keras takes by position and, after them, options for the
// ones Keras takes by keyword:
//
//	layers.Input(32, 32, 3)
//	layers.Flatten()
//	layers.Dense(3000, layers.ReLU)
//	layers.Dense(10, layers.Sigmoid, layers.WithoutBias(), layers.Named("scores"))
//	layers.NewActivation(layers.Softmax)
//	layers.Conv2D(32, 3, layers.Padding("same"), layers.ReLU)
//	layers.MaxPooling2D(layers.PoolSize(2), layers.Strides(2))
//	layers.Dropout(0.25, layers.Seed(7))
//	layers.BatchNormalization(layers.Momentum(0.9))
//	layers.LSTM(64, layers.ReturnSequences())
//	layers.Dot(1, layers.Normalize()) // keras.layers.Dot(axes=1, normalize=True)
//	layers.DotAxes(2, 1)              // keras.layers.Dot(axes=(2, 1))
//	layers.Rescaling(1.0/255, 0)      // keras.layers.Rescaling(1/255)
//	layers.Normalization()            // then norm.Adapt(ds, 0), as Keras' adapt
//	layers.Resizing(64, 64, layers.CropToAspectRatio())
//	layers.CenterCrop(28, 28)
//	layers.RandomFlip("horizontal")
//	layers.RandomTranslation(0.1, 0.1, layers.FillMode("nearest"))
//
// Every layer accepts the Option Named, Keras' name= argument; Input,
// whose arguments are its shape, takes it with With:
// layers.Input(32, 32, 3).With(layers.Named("images")). The Activation
// layer's function is NewActivation because Activation is the type of
// the activations (layers.ReLU, ...) that Dense also takes.
//
// Unnamed layers get the names Keras gives them in a fresh session:
// dense, dense_1, ..., counted per model. A layer's name is shown by
// Summary and prefixes the names of its weights ("dense/kernel",
// "dense/bias"), so a model refuses, when it is built, a name that is
// empty or contains "/", and two layers with the same name (CheckNames).
//
// # Looking up by Keras name
//
// GetActivation and GetInitializer find an activation or an initializer
// by the string Keras takes (Dense(64, activation="relu")), as
// keras.activations.get and keras.initializers.get do; packages losses,
// metrics and optim have the same Get for theirs. An unknown name is an
// error that lists the known ones.
//
// # Building
//
// A layer is configured when it is made and built when the model learns
// the shape of its input: Build creates the weights, drawn from a seeded
// random stream so that the same seed gives the same initial model. Call
// adds the layer to a gorgonia graph. A layer is owned by one model.
//
// Dense and the convolutions default to Keras': glorot_uniform kernel, zero
// bias, no activation.
//
// # Training and inference
//
// A model compiles one graph for training (Fit) and another for inference
// (Evaluate, Predict); Call sees which in Flow.Training. Dropout drops
// units only in training, drawing them from a counter-based generator
// keyed by its seed and the training step, so every device drops the same
// ones; the random augmentation layers (RandomFlip and the others) draw
// each image's transform the same way, and take no gradient, so they come
// before any layer with weights. BatchNormalization uses the batch's
// statistics in training and its moving averages, non-trainable weights,
// in inference; its training graph updates them (ops.MovingAverage), on
// the model's device, in each step.
package layers
