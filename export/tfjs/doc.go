// Package tfjs writes a gokeras model in TensorFlow.js' layers format, the
// format of tensorflowjs_converter's Keras output: a folder holding
// model.json (the model's Keras topology and a manifest of its weights)
// and the weights in binary shards. TensorFlow.js loads it with
// tf.loadLayersModel, in a browser or in Node.js:
//
//	err := tfjs.Export(model, "web/model")
//
//	const model = await tf.loadLayersModel("model/model.json");
//	model.predict(x);
//
// Export writes the topology as Keras 2 writes it (what TensorFlow.js
// reads): a Sequential's layers after an InputLayer, or a functional
// model's layers with their inbound nodes as nested lists. Each layer's
// config is its Keras config (layers.ConfigOf), trainable and float32,
// without its regularizers and Dropout's seed, which do not change
// predictions and which TensorFlow.js reads otherwise (a seed beyond 2^53
// would lose digits). TensorFlow.js has no Subtract layer: a model with
// one is refused, naming it. Weights are named as gokeras and Keras name
// them ("dense/kernel"), float32, in shards of at most 4 MB
// (group1-shard1of2.bin, ...), as the converter writes them.
//
// nn.LoadModel reads such a folder back (and the models TensorFlow.js
// saves): nn.LoadModel("web/model").
package tfjs
