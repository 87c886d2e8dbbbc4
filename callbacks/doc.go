// Package callbacks holds Keras' callbacks for nn.Sequential.Fit:
// EarlyStopping, ModelCheckpoint, CSVLogger, ReduceLROnPlateau,
// LearningRateScheduler and TensorBoard (TensorFlow event files, written
// without TensorFlow), with the names, defaults, messages and files of
// keras.callbacks.
//
// Make one with its constructor, which sets Keras' defaults, change the
// fields you need, and pass it to Fit with nn.Callbacks:
//
//	stop := callbacks.NewEarlyStopping()
//	stop.Patience, stop.RestoreBestWeights = 3, true
//	save := callbacks.NewModelCheckpoint("ckpt-{epoch:02d}-{val_loss:.2f}.safetensors")
//	save.SaveBestOnly = true
//	history, err := model.Fit(ctx, data, nn.Epochs(50), nn.ValidationSplit(0.1),
//		nn.Callbacks(stop, save, callbacks.NewCSVLogger("log.csv")))
//
// Callbacks run in the order given, after the progress bar Fit draws
// itself (nn.Verbose). EarlyStopping, ModelCheckpoint and ReduceLROnPlateau
// watch a figure of the epoch's logs, "val_loss" by default; with Mode
// "auto" a figure whose name ends in "acc", "accuracy" or "auc" is better
// when larger, any other when smaller. A watched figure missing from the
// logs prints Keras' warning to Fit's output and the epoch is skipped.
//
// A callback of your own embeds nn.CallbackBase and defines the hooks it
// needs; see nn.Callback.
package callbacks
