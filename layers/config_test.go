package layers

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/gokeras/gokeras/internal/formats/configargs"
)

// configCase is a layer, the shape of a sample it takes, and its config
// as JSON.
type configCase struct {
	layer Layer
	input []int
	want  string
}

// configCases returns layers of every type, most with other arguments
// than the defaults. They are new on each call: building a layer changes
// it (a random layer without a seed reports the seed it drew), so a test
// run with -count=2 must not find the layers the first run built.
func configCases() []configCase {
	return []configCase{
		{Dense(5), []int{6},
			`{"class_name":"Dense","config":{"activation":"linear","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"name":"","units":5,"use_bias":true}}`},
		{Dense(4, ReLU, WithoutBias(), KernelInitializer(RandomNormal(0.5, 0.25)), KernelRegularizer(L2(0.5)), ActivityRegularizer(L1L2(0.25, 0.125)), Named("d")), []int{6},
			`{"class_name":"Dense","config":{"activation":"relu","activity_regularizer":{"class_name":"L1L2","config":{"l1":0.25,"l2":0.125}},"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"kernel_initializer":{"class_name":"RandomNormal","config":{"mean":0.5,"stddev":0.25}},"kernel_regularizer":{"class_name":"L2","config":{"l2":0.5}},"name":"d","units":4,"use_bias":false}}`},
		{Conv2D(3, 2, KernelSize(2, 3), Strides(2, 1), Padding("same"), Sigmoid, BiasInitializer(Ones()), BiasRegularizer(L1(0.5))), []int{6, 6, 2},
			`{"class_name":"Conv2D","config":{"activation":"sigmoid","activity_regularizer":null,"bias_initializer":{"class_name":"Ones","config":{}},"bias_regularizer":{"class_name":"L1","config":{"l1":0.5}},"dilation_rate":[1,1],"filters":3,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"kernel_size":[2,3],"name":"","padding":"same","strides":[2,1],"use_bias":true}}`},
		{Conv2D(2, 3, DilationRate(2), Named("c")), []int{7, 7, 1},
			`{"class_name":"Conv2D","config":{"activation":"linear","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dilation_rate":[2,2],"filters":2,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"kernel_size":[3,3],"name":"c","padding":"valid","strides":[1,1],"use_bias":true}}`},
		{Conv1D(2, 3, Strides(2), Padding("same"), Tanh), []int{8, 2},
			`{"class_name":"Conv1D","config":{"activation":"tanh","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dilation_rate":[1],"filters":2,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"kernel_size":[3],"name":"","padding":"same","strides":[2],"use_bias":true}}`},
		{Conv1D(4, 2, DilationRate(3), WithoutBias()), []int{8, 2},
			`{"class_name":"Conv1D","config":{"activation":"linear","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dilation_rate":[3],"filters":4,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"kernel_size":[2],"name":"","padding":"valid","strides":[1],"use_bias":false}}`},
		{MaxPooling2D(), []int{6, 6, 2},
			`{"class_name":"MaxPooling2D","config":{"name":"","padding":"valid","pool_size":[2,2],"strides":[2,2]}}`},
		{AveragePooling2D(PoolSize(3, 2), Strides(1, 2), Padding("same"), Named("avg")), []int{6, 6, 2},
			`{"class_name":"AveragePooling2D","config":{"name":"avg","padding":"same","pool_size":[3,2],"strides":[1,2]}}`},
		{MaxPooling1D(PoolSize(3)), []int{8, 2},
			`{"class_name":"MaxPooling1D","config":{"name":"","padding":"valid","pool_size":[3],"strides":[3]}}`},
		{AveragePooling1D(Strides(1), Padding("same")), []int{8, 2},
			`{"class_name":"AveragePooling1D","config":{"name":"","padding":"same","pool_size":[2],"strides":[1]}}`},
		{GlobalMaxPooling2D(), []int{6, 6, 2}, `{"class_name":"GlobalMaxPooling2D","config":{"name":""}}`},
		{GlobalAveragePooling2D(Named("g")), []int{6, 6, 2}, `{"class_name":"GlobalAveragePooling2D","config":{"name":"g"}}`},
		{GlobalMaxPooling1D(), []int{8, 2}, `{"class_name":"GlobalMaxPooling1D","config":{"name":""}}`},
		{GlobalAveragePooling1D(), []int{8, 2}, `{"class_name":"GlobalAveragePooling1D","config":{"name":""}}`},
		{Dropout(0.25), []int{4}, `{"class_name":"Dropout","config":{"name":"","rate":0.25,"seed":null}}`},
		{Dropout(0.5, Seed(1<<63+1), Named("drop")), []int{4}, `{"class_name":"Dropout","config":{"name":"drop","rate":0.5,"seed":9223372036854775809}}`},
		{BatchNormalization(Momentum(0.5), Epsilon(0.25), WithoutCenter()), []int{3, 4},
			`{"class_name":"BatchNormalization","config":{"axis":-1,"center":false,"epsilon":0.25,"momentum":0.5,"name":"","scale":true}}`},
		{LayerNormalization(WithoutScale(), Epsilon(0.5)), []int{3, 4},
			`{"class_name":"LayerNormalization","config":{"axis":-1,"center":true,"epsilon":0.5,"name":"","scale":false}}`},
		{Embedding(10, 3, EmbeddingsInitializer(RandomUniform(-1, 1))), []int{5},
			`{"class_name":"Embedding","config":{"embeddings_initializer":{"class_name":"RandomUniform","config":{"maxval":1,"minval":-1}},"input_dim":10,"mask_zero":false,"name":"","output_dim":3}}`},
		{Embedding(10, 3), []int{5},
			`{"class_name":"Embedding","config":{"embeddings_initializer":{"class_name":"RandomUniform","config":{"maxval":0.05,"minval":-0.05}},"input_dim":10,"mask_zero":false,"name":"","output_dim":3}}`},
		{Reshape([]int{2, -1}), []int{6}, `{"class_name":"Reshape","config":{"name":"","target_shape":[2,-1]}}`},
		{Flatten(Named("f")), []int{2, 3}, `{"class_name":"Flatten","config":{"name":"f"}}`},
		{Permute([]int{3, 1, 2}, Named("p")), []int{2, 3, 4}, `{"class_name":"Permute","config":{"dims":[3,1,2],"name":"p"}}`},
		{NewActivation(Tanh), []int{4}, `{"class_name":"Activation","config":{"activation":"tanh","name":""}}`},
		{NewActivation(GELUApproximate), []int{4}, `{"class_name":"Activation","config":{"activation":"gelu_approximate","name":""}}`},
		{NewActivation(Swish), []int{4}, `{"class_name":"Activation","config":{"activation":"swish","name":""}}`},
		{NewActivation(ELU), []int{4}, `{"class_name":"Activation","config":{"activation":"elu","name":""}}`},
		{NewActivation(SELU), []int{4}, `{"class_name":"Activation","config":{"activation":"selu","name":""}}`},
		{NewActivation(Softplus), []int{4}, `{"class_name":"Activation","config":{"activation":"softplus","name":""}}`},
		{NewActivation(Softsign), []int{4}, `{"class_name":"Activation","config":{"activation":"softsign","name":""}}`},
		{NewActivation(HardSigmoid), []int{4}, `{"class_name":"Activation","config":{"activation":"hard_sigmoid","name":""}}`},
		{NewActivation(Exponential), []int{4}, `{"class_name":"Activation","config":{"activation":"exponential","name":""}}`},
		{NewActivation(LeakyReLU), []int{4}, `{"class_name":"Activation","config":{"activation":"leaky_relu","name":""}}`},
		{NewLeakyReLU(0.3), []int{4}, `{"class_name":"LeakyReLU","config":{"alpha":0.3,"name":""}}`},
		{NewELU(0.5, Named("e")), []int{4}, `{"class_name":"ELU","config":{"alpha":0.5,"name":"e"}}`},
		{NewPReLU(), []int{4, 4, 2},
			`{"class_name":"PReLU","config":{"alpha_initializer":{"class_name":"Zeros","config":{}},"alpha_regularizer":null,"name":"","shared_axes":null}}`},
		{NewPReLU(SharedAxes(1, 2), AlphaInitializer(RandomNormal(0.25, 0.5)), AlphaRegularizer(L2(0.01)), Named("p")), []int{4, 4, 2},
			`{"class_name":"PReLU","config":{"alpha_initializer":{"class_name":"RandomNormal","config":{"mean":0.25,"stddev":0.5}},"alpha_regularizer":{"class_name":"L2","config":{"l2":0.01}},"name":"p","shared_axes":[1,2]}}`},
		{Input(3, 4).With(Named("in")), []int{3, 4}, `{"class_name":"InputLayer","config":{"batch_shape":[null,3,4],"name":"in"}}`},
		{Add(Named("residual")), []int{4, 4, 2}, `{"class_name":"Add","config":{"name":"residual"}}`},
		{Subtract(), []int{3}, `{"class_name":"Subtract","config":{"name":""}}`},
		{Multiply(), []int{3}, `{"class_name":"Multiply","config":{"name":""}}`},
		{Average(), []int{3}, `{"class_name":"Average","config":{"name":""}}`},
		{Maximum(), []int{3}, `{"class_name":"Maximum","config":{"name":""}}`},
		{Minimum(), []int{3}, `{"class_name":"Minimum","config":{"name":""}}`},
		{Concatenate(-1), []int{2, 3}, `{"class_name":"Concatenate","config":{"axis":-1,"name":""}}`},
		{Dot(-1, Normalize()), []int{2, 3}, `{"class_name":"Dot","config":{"axes":-1,"name":"","normalize":true}}`},
		{DotAxes(2, 2, Named("att")), []int{2, 3}, `{"class_name":"Dot","config":{"axes":[2,2],"name":"att","normalize":false}}`},
		{AdditiveAttention(), []int{3, 4}, `{"class_name":"AdditiveAttention","config":{"dropout":0,"name":"","use_scale":true}}`},
		{AdditiveAttention(WithoutAttentionScale(), AttentionDropout(0.25), Named("add")), []int{3, 4}, `{"class_name":"AdditiveAttention","config":{"dropout":0.25,"name":"add","use_scale":false}}`},
		{Attention(), []int{3, 4}, `{"class_name":"Attention","config":{"dropout":0,"name":"","score_mode":"dot","use_scale":false}}`},
		{Attention(UseScale(), ScoreMode("concat"), AttentionDropout(0.5), UseCausalMask(), Named("att")), []int{3, 4}, `{"class_name":"Attention","config":{"causal":true,"dropout":0.5,"name":"att","score_mode":"concat","use_scale":true}}`},
		{MultiHeadAttention(2, 3), []int{3, 4}, `{"class_name":"MultiHeadAttention","config":{"activity_regularizer":null,"attention_axes":null,"bias_constraint":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dropout":0,"kernel_constraint":null,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"key_dim":3,"name":"","num_heads":2,"output_shape":null,"use_bias":true,"value_dim":3}}`},
		{MultiHeadAttention(2, 3, ValueDim(2), OutputShape(5), AttentionDropout(0.25), WithoutBias(), KernelInitializer(HeNormal()), Named("mha")), []int{3, 4}, `{"class_name":"MultiHeadAttention","config":{"activity_regularizer":null,"attention_axes":null,"bias_constraint":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dropout":0.25,"kernel_constraint":null,"kernel_initializer":{"class_name":"HeNormal","config":{}},"kernel_regularizer":null,"key_dim":3,"name":"mha","num_heads":2,"output_shape":5,"use_bias":false,"value_dim":2}}`},
		{ZeroPadding2D(1, 0, 2, 3), []int{4, 5, 2}, `{"class_name":"ZeroPadding2D","config":{"data_format":"channels_last","name":"","padding":[[1,0],[2,3]]}}`},
		{ZeroPadding2DSymmetric(1, 1, Named("pad")), []int{4, 5, 2}, `{"class_name":"ZeroPadding2D","config":{"data_format":"channels_last","name":"pad","padding":[[1,1],[1,1]]}}`},
		{Cropping2D(1, 0, 2, 1), []int{4, 5, 2}, `{"class_name":"Cropping2D","config":{"cropping":[[1,0],[2,1]],"data_format":"channels_last","name":""}}`},
		{Cropping2DSymmetric(1, 2), []int{4, 5, 2}, `{"class_name":"Cropping2D","config":{"cropping":[[1,1],[2,2]],"data_format":"channels_last","name":""}}`},
		{UpSampling2D(2, 3), []int{4, 5, 2}, `{"class_name":"UpSampling2D","config":{"data_format":"channels_last","interpolation":"nearest","name":"","size":[2,3]}}`},
		{Identity(Named("same")), []int{3}, `{"class_name":"Identity","config":{"name":"same"}}`},
		{NewReLU(), []int{2, 3}, `{"class_name":"ReLU","config":{"max_value":null,"name":"","negative_slope":0,"threshold":0}}`},
		{Rescaling(0.5, -1, Named("rs")), []int{4, 4, 3}, `{"class_name":"Rescaling","config":{"name":"rs","offset":-1,"scale":0.5}}`},
		{Masking(-1, Named("mk")), []int{5, 3}, `{"class_name":"Masking","config":{"mask_value":-1,"name":"mk"}}`},
		{TimeDistributed(Dense(2, WithoutBias()), Named("td")), []int{5, 3}, `{"class_name":"TimeDistributed","config":{"layer":{"class_name":"Dense","config":{"activation":"linear","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"name":"","units":2,"use_bias":false}},"name":"td"}}`},
		{Bidirectional(GRU(2, ReturnSequences()), Named("bi"), MergeMode("")), []int{3, 2}, `{"class_name":"Bidirectional","config":{"layer":{"class_name":"GRU","config":{"activation":"tanh","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dropout":0,"go_backwards":false,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"name":"gru","recurrent_activation":"sigmoid","recurrent_dropout":0,"recurrent_initializer":{"class_name":"Orthogonal","config":{"gain":1}},"recurrent_regularizer":null,"reset_after":true,"return_sequences":true,"return_state":false,"stateful":false,"units":2,"unroll":false,"use_bias":true}},"merge_mode":null,"name":"bi"}}`},
		{Embedding(6, 2, MaskZero(true)), []int{4}, `{"class_name":"Embedding","config":{"embeddings_initializer":{"class_name":"RandomUniform","config":{"maxval":0.05,"minval":-0.05}},"input_dim":6,"mask_zero":true,"name":"","output_dim":2}}`},
		{Resizing(2, 3, Named("rz")), []int{4, 4, 3},
			`{"class_name":"Resizing","config":{"crop_to_aspect_ratio":false,"height":2,"interpolation":"bilinear","name":"rz","width":3}}`},
		{Resizing(5, 3, Interpolation("nearest"), CropToAspectRatio()), []int{4, 4, 3},
			`{"class_name":"Resizing","config":{"crop_to_aspect_ratio":true,"height":5,"interpolation":"nearest","name":"","width":3}}`},
		{CenterCrop(2, 3, Named("cc")), []int{4, 4, 3}, `{"class_name":"CenterCrop","config":{"height":2,"name":"cc","width":3}}`},
		{Normalization(Named("n")), []int{4, 4, 3}, `{"class_name":"Normalization","config":{"axis":[-1],"invert":false,"mean":null,"name":"n","variance":null}}`},
		{Normalization(NormalizationAxis(), Invert()), []int{4, 4, 3}, `{"class_name":"Normalization","config":{"axis":[],"invert":true,"mean":null,"name":"","variance":null}}`},
		{Normalization(NormalizationAxis(1, 3), MeanVariance([]float64{1}, []float64{3})), []int{4, 4, 3},
			`{"class_name":"Normalization","config":{"axis":[1,3],"invert":false,"mean":1,"name":"","variance":3}}`},
		{Normalization(MeanVariance([]float64{1, 2, 3}, []float64{4, 5, 6})), []int{4, 4, 3},
			`{"class_name":"Normalization","config":{"axis":[-1],"invert":false,"mean":[1,2,3],"name":"","variance":[4,5,6]}}`},
		{RandomFlip("horizontal"), []int{4, 4, 3}, `{"class_name":"RandomFlip","config":{"mode":"horizontal","name":"","seed":null}}`},
		{RandomFlip("horizontal_and_vertical", Seed(3), Named("flip")), []int{4, 4, 3}, `{"class_name":"RandomFlip","config":{"mode":"horizontal_and_vertical","name":"flip","seed":3}}`},
		{RandomTranslation(0.1, 0.2, FillMode("constant"), FillValue(0.5), Seed(9), Named("shift")), []int{4, 4, 3},
			`{"class_name":"RandomTranslation","config":{"fill_mode":"constant","fill_value":0.5,"height_factor":0.1,"interpolation":"bilinear","name":"shift","seed":9,"width_factor":0.2}}`},
		{RandomTranslationRange([2]float64{-0.2, 0.3}, [2]float64{-0.1, 0.1}, Interpolation("nearest"), FillMode("wrap")), []int{4, 4, 3},
			`{"class_name":"RandomTranslation","config":{"fill_mode":"wrap","fill_value":0,"height_factor":[-0.2,0.3],"interpolation":"nearest","name":"","seed":null,"width_factor":[-0.1,0.1]}}`},
		{RandomRotation(0.1, Seed(8), Interpolation("nearest")), []int{4, 4, 3},
			`{"class_name":"RandomRotation","config":{"factor":0.1,"fill_mode":"reflect","fill_value":0,"interpolation":"nearest","name":"","seed":8}}`},
		{RandomRotationRange([2]float64{-0.2, 0.3}, FillMode("constant"), FillValue(1)), []int{4, 4, 3},
			`{"class_name":"RandomRotation","config":{"factor":[-0.2,0.3],"fill_mode":"constant","fill_value":1,"interpolation":"bilinear","name":"","seed":null}}`},
		{RandomCrop(2, 3, Seed(4), Named("win")), []int{4, 4, 3}, `{"class_name":"RandomCrop","config":{"height":2,"name":"win","seed":4,"width":3}}`},
		{RandomContrast(0.2, Seed(2)), []int{4, 4, 3}, `{"class_name":"RandomContrast","config":{"factor":0.2,"name":"","seed":2}}`},
		{RandomContrastRange([2]float64{0.1, 0.3}, Named("c")), []int{4, 4, 3}, `{"class_name":"RandomContrast","config":{"factor":[0.1,0.3],"name":"c","seed":null}}`},
		{RandomBrightness(0.2, Seed(2)), []int{4, 4, 3},
			`{"class_name":"RandomBrightness","config":{"factor":0.2,"name":"","seed":2,"value_range":[0,255]}}`},
		{RandomBrightnessRange([2]float64{-0.1, 0.3}, ValueRange(-1, 1), Named("light")), []int{4, 4, 3},
			`{"class_name":"RandomBrightness","config":{"factor":[-0.1,0.3],"name":"light","seed":null,"value_range":[-1,1]}}`},
		{RandomZoom(0.2, Seed(4)), []int{4, 4, 3},
			`{"class_name":"RandomZoom","config":{"fill_mode":"reflect","fill_value":0,"height_factor":0.2,"interpolation":"bilinear","name":"","seed":4,"width_factor":null}}`},
		{RandomZoomRange([2]float64{-0.3, -0.1}, [2]float64{-0.2, 0.2}, FillMode("constant"), Named("zoom")), []int{4, 4, 3},
			`{"class_name":"RandomZoom","config":{"fill_mode":"constant","fill_value":0,"height_factor":[-0.3,-0.1],"interpolation":"bilinear","name":"zoom","seed":null,"width_factor":[-0.2,0.2]}}`},
		{SimpleRNN(4), []int{3, 2},
			`{"class_name":"SimpleRNN","config":{"activation":"tanh","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dropout":0,"go_backwards":false,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"name":"","recurrent_dropout":0,"recurrent_initializer":{"class_name":"Orthogonal","config":{"gain":1}},"recurrent_regularizer":null,"return_sequences":false,"return_state":false,"stateful":false,"units":4,"unroll":false,"use_bias":true}}`},
		{LSTM(3, ReturnSequences(), GoBackwards(), Named("l"), RecurrentActivation(HardSigmoid), WithoutUnitForgetBias()), []int{3, 2},
			`{"class_name":"LSTM","config":{"activation":"tanh","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dropout":0,"go_backwards":true,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"name":"l","recurrent_activation":"hard_sigmoid","recurrent_dropout":0,"recurrent_initializer":{"class_name":"Orthogonal","config":{"gain":1}},"recurrent_regularizer":null,"return_sequences":true,"return_state":false,"stateful":false,"unit_forget_bias":false,"units":3,"unroll":false,"use_bias":true}}`},
		{GRU(2, ResetAfter(false), Named("g")), []int{3, 2},
			`{"class_name":"GRU","config":{"activation":"tanh","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dropout":0,"go_backwards":false,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"name":"g","recurrent_activation":"sigmoid","recurrent_dropout":0,"recurrent_initializer":{"class_name":"Orthogonal","config":{"gain":1}},"recurrent_regularizer":null,"reset_after":false,"return_sequences":false,"return_state":false,"stateful":false,"units":2,"unroll":false,"use_bias":true}}`},
		{GRU(2, WithoutBias(), RecurrentInitializer(GlorotUniform()), Sigmoid), []int{3, 2},
			`{"class_name":"GRU","config":{"activation":"sigmoid","activity_regularizer":null,"bias_initializer":{"class_name":"Zeros","config":{}},"bias_regularizer":null,"dropout":0,"go_backwards":false,"kernel_initializer":{"class_name":"GlorotUniform","config":{}},"kernel_regularizer":null,"name":"","recurrent_activation":"sigmoid","recurrent_dropout":0,"recurrent_initializer":{"class_name":"GlorotUniform","config":{}},"recurrent_regularizer":null,"reset_after":true,"return_sequences":false,"return_state":false,"stateful":false,"units":2,"unroll":false,"use_bias":false}}`},
	}
}

// TestConfigRoundTrips checks each layer's config, and that the layer
// FromConfig makes of its JSON has the same config and, built from the
// same random stream, the same output shape and weights.
func TestConfigRoundTrips(t *testing.T) {
	for _, c := range configCases() {
		t.Run(c.want[:40], func(t *testing.T) {
			cfg, err := ConfigOf(c.layer)
			if err != nil {
				t.Fatal(err)
			}
			js, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if string(js) != c.want {
				t.Fatalf("config\n%s\nwant\n%s", js, c.want)
			}
			// Through JSON, as a model file holds it: numbers as json.Number.
			dec := json.NewDecoder(strings.NewReader(string(js)))
			dec.UseNumber()
			var read Config
			if err := dec.Decode(&read); err != nil {
				t.Fatal(err)
			}
			l, err := FromConfig(read)
			if err != nil {
				t.Fatal(err)
			}
			again, err := ConfigOf(l)
			if err != nil {
				t.Fatal(err)
			}
			if js2, _ := json.Marshal(again); string(js2) != c.want {
				t.Errorf("the layer made from the config has the config\n%s\nwant\n%s", js2, c.want)
			}
			if l.Type() != c.layer.Type() || l.Name() != c.layer.Name() {
				t.Errorf("made a %s named %q, want a %s named %q", l.Type(), l.Name(), c.layer.Type(), c.layer.Name())
			}
			// Straight from the Go values too.
			if _, err := FromConfig(cfg); err != nil {
				t.Errorf("FromConfig of the Config itself: %v", err)
			}
			build := func(l Layer) ([]int, error) {
				if mi, ok := l.(MultiInputLayer); ok { // a merge layer: c.input twice
					return mi.BuildInputs([][]int{c.input, c.input}, rand.New(rand.NewPCG(1, 2)))
				}
				return l.Build(c.input, rand.New(rand.NewPCG(1, 2)))
			}
			wantOut, err := build(c.layer)
			if err != nil {
				t.Fatal(err)
			}
			gotOut, err := build(l)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(gotOut, wantOut) {
				t.Errorf("output shape %v, want %v", gotOut, wantOut)
			}
			want, got := c.layer.Params(), l.Params()
			if len(got) != len(want) {
				t.Fatalf("%d weights, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].Name != want[i].Name || !slices.Equal(got[i].Value.Shape(), want[i].Value.Shape()) ||
					!slices.Equal(got[i].Value.Data().([]float32), want[i].Value.Data().([]float32)) {
					t.Errorf("weight %d: %s %v, want %s %v", i, got[i].Name, got[i].Value.Shape(), want[i].Name, want[i].Value.Shape())
				}
			}
		})
	}
}

// TestConfigCoversEveryClass checks that the cases above make each class
// FromConfig knows.
func TestConfigCoversEveryClass(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range configCases() {
		seen[c.layer.Type()] = true
	}
	for _, class := range classNames() {
		if !seen[class] {
			t.Errorf("no config case of class %s", class)
		}
	}
}

// TestDropoutConfigKeepsItsKey checks that a built Dropout layer without
// a seed reports the key it drew, so that the layer made from its config
// drops the same units.
func TestDropoutConfigKeepsItsKey(t *testing.T) {
	d := Dropout(0.5)
	if _, err := d.Build([]int{3}, rand.New(rand.NewPCG(4, 5))); err != nil {
		t.Fatal(err)
	}
	want := rand.New(rand.NewPCG(4, 5)).Uint64()
	c, err := d.Config()
	if err != nil {
		t.Fatal(err)
	}
	if c.Config["seed"] != want {
		t.Fatalf("seed %v, want the key drawn, %d", c.Config["seed"], want)
	}
	l, err := FromConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Build([]int{3}, rand.New(rand.NewPCG(9, 9))); err != nil {
		t.Fatal(err)
	}
	if got := l.(*DropoutLayer).key; got != d.key {
		t.Errorf("the layer made from the config has key %d, want %d", got, d.key)
	}
}

// TestInitializerAndRegularizerConfigs round-trips every initializer and
// regularizer, and reads Keras' defaults for arguments left out.
func TestInitializerAndRegularizerConfigs(t *testing.T) {
	for _, c := range []struct {
		init Initializer
		want string
	}{
		{GlorotUniform(), `{"class_name":"GlorotUniform","config":{}}`},
		{Zeros(), `{"class_name":"Zeros","config":{}}`},
		{Ones(), `{"class_name":"Ones","config":{}}`},
		{constant(0.5), `{"class_name":"Constant","config":{"value":0.5}}`},
		{RandomNormal(1, 2), `{"class_name":"RandomNormal","config":{"mean":1,"stddev":2}}`},
		{HeNormal(), `{"class_name":"HeNormal","config":{}}`},
		{RandomUniform(-2, 3), `{"class_name":"RandomUniform","config":{"maxval":3,"minval":-2}}`},
	} {
		cfg, err := InitializerConfig(c.init)
		if err != nil {
			t.Fatal(err)
		}
		if js, _ := json.Marshal(cfg); string(js) != c.want {
			t.Errorf("%s: config %s, want %s", c.init.Name(), js, c.want)
		}
		got, err := InitializerFromConfig(cfg)
		if err != nil || got != c.init {
			t.Errorf("%s: made %#v (%v), want %#v", c.init.Name(), got, err, c.init)
		}
	}
	for class, want := range map[string]Initializer{"RandomNormal": RandomNormal(0, 0.05), "RandomUniform": RandomUniform(-0.05, 0.05), "Constant": Zeros()} {
		if got, err := InitializerFromConfig(Config{ClassName: class}); err != nil || got != want {
			t.Errorf("%s with no arguments: %#v (%v), want %#v", class, got, err, want)
		}
	}
	for _, c := range []struct {
		r    Regularizer
		want string
	}{
		{L1(0.5), `{"class_name":"L1","config":{"l1":0.5}}`},
		{L2(0.25), `{"class_name":"L2","config":{"l2":0.25}}`},
		{L1L2(0.5, 0.25), `{"class_name":"L1L2","config":{"l1":0.5,"l2":0.25}}`},
		{L1L2(0, 0), `{"class_name":"L1L2","config":{"l1":0,"l2":0}}`},
	} {
		cfg := RegularizerConfig(c.r)
		if js, _ := json.Marshal(cfg); string(js) != c.want {
			t.Errorf("%v: config %s, want %s", c.r, js, c.want)
		}
		if got, err := RegularizerFromConfig(cfg); err != nil || got != c.r {
			t.Errorf("%v: made %v (%v)", c.r, got, err)
		}
	}
	for class, want := range map[string]Regularizer{"L1": L1(0.01), "L2": L2(0.01), "L1L2": {}} {
		if got, err := RegularizerFromConfig(Config{ClassName: class}); err != nil || got != want {
			t.Errorf("%s with no arguments: %v (%v), want %v", class, got, err, want)
		}
	}
}

// TestFromConfigDefaults checks that arguments left out take Keras'
// defaults: the layer is the one the constructor makes.
func TestFromConfigDefaults(t *testing.T) {
	for _, c := range []struct {
		config Config
		want   Layer
	}{
		{Config{"Dense", map[string]any{"units": 3}}, Dense(3)},
		{Config{"Conv2D", map[string]any{"filters": 2, "kernel_size": []int{3}}}, Conv2D(2, 3)},
		{Config{"Conv1D", map[string]any{"filters": 2, "kernel_size": []int{3}}}, Conv1D(2, 3)},
		{Config{"MaxPooling2D", nil}, MaxPooling2D()},
		{Config{"AveragePooling1D", map[string]any{}}, AveragePooling1D()},
		{Config{"Dropout", map[string]any{"rate": 0.5}}, Dropout(0.5)},
		{Config{"BatchNormalization", nil}, BatchNormalization()},
		{Config{"LayerNormalization", nil}, LayerNormalization()},
		{Config{"Embedding", map[string]any{"input_dim": 4, "output_dim": 2}}, Embedding(4, 2)},
		{Config{"Activation", map[string]any{"activation": "softmax"}}, NewActivation(Softmax)},
		{Config{"Activation", map[string]any{"activation": "silu"}}, NewActivation(Swish)},
		{Config{"Dense", map[string]any{"units": 3, "activation": nil, "kernel_initializer": nil}}, Dense(3)},
		{Config{"ZeroPadding2D", nil}, ZeroPadding2DSymmetric(1, 1)},
		{Config{"ZeroPadding2D", map[string]any{"padding": 2}}, ZeroPadding2D(2, 2, 2, 2)},
		{Config{"ZeroPadding2D", map[string]any{"padding": []int{1, 2}, "data_format": nil}}, ZeroPadding2DSymmetric(1, 2)},
		{Config{"ZeroPadding2D", map[string]any{"padding": []any{[]int{1, 2}, []int{3, 4}}, "data_format": "channels_last"}}, ZeroPadding2D(1, 2, 3, 4)},
		{Config{"Cropping2D", nil}, Cropping2D(0, 0, 0, 0)},
		{Config{"Cropping2D", map[string]any{"cropping": 1}}, Cropping2D(1, 1, 1, 1)},
		{Config{"Cropping2D", map[string]any{"cropping": []int{2, 0}}}, Cropping2DSymmetric(2, 0)},
		{Config{"UpSampling2D", nil}, UpSampling2D(2, 2)},
		{Config{"UpSampling2D", map[string]any{"size": 3, "interpolation": "nearest"}}, UpSampling2D(3, 3)},
		{Config{"Identity", nil}, Identity()},
		{Config{"ReLU", map[string]any{"max_value": nil, "negative_slope": 0.0, "threshold": 0.0}}, NewReLU()},
		{Config{"ReLU", nil}, NewReLU()},
		{Config{"LeakyReLU", nil}, NewLeakyReLU(0.3)},
		{Config{"LeakyReLU", map[string]any{"negative_slope": 0.2}}, NewLeakyReLU(0.2)},
		{Config{"ELU", nil}, NewELU(1)},
		{Config{"PReLU", nil}, NewPReLU()},
		{Config{"PReLU", map[string]any{"shared_axes": []int{1}, "alpha_initializer": nil}}, NewPReLU(SharedAxes(1))},
		{Config{"Rescaling", map[string]any{"scale": 1.0 / 255}}, Rescaling(1.0/255, 0)},
		{Config{"Masking", map[string]any{}}, Masking(0)},
		{Config{"RandomFlip", nil}, RandomFlip("horizontal_and_vertical")},
		{Config{"RandomZoom", map[string]any{"height_factor": 0.1}}, RandomZoom(0.1)},
		{Config{"RandomRotation", map[string]any{"factor": 0.2}}, RandomRotation(0.2)},
		{Config{"RandomBrightness", map[string]any{"factor": 0.2}}, RandomBrightness(0.2)},
		{Config{"RandomBrightness", map[string]any{"factor": 0.2, "value_range": []float64{0, 1}}}, RandomBrightness(0.2, ValueRange(0, 1))},
		{Config{"RandomZoom", map[string]any{"height_factor": []float64{-0.3, 0.2}, "width_factor": nil}}, func() Layer {
			l := RandomZoomRange([2]float64{-0.3, 0.2}, [2]float64{-0.3, 0.2})
			l.keepAspect = true
			return l
		}()},
		{Config{"RandomTranslation", map[string]any{"height_factor": 0.1, "width_factor": 0.2}}, RandomTranslation(0.1, 0.2)},
		{Config{"RandomTranslation", map[string]any{"height_factor": []float64{-0.1, 0.1}, "width_factor": 0.2, "fill_mode": "nearest", "seed": nil}},
			RandomTranslationRange([2]float64{-0.1, 0.1}, [2]float64{-0.2, 0.2}, FillMode("nearest"))},
	} {
		got, err := FromConfig(c.config)
		if err != nil {
			t.Errorf("%v: %v", c.config, err)
			continue
		}
		gotJS, _ := json.Marshal(must(ConfigOf(got)))
		wantJS, _ := json.Marshal(must(ConfigOf(c.want)))
		if string(gotJS) != string(wantJS) {
			t.Errorf("%v made\n%s\nwant\n%s", c.config, gotJS, wantJS)
		}
	}
}

func must(c Config, err error) Config {
	if err != nil {
		panic(err)
	}
	return c
}

// TestFromConfigErrors checks that each way a config can be wrong is an
// error that names it.
func TestFromConfigErrors(t *testing.T) {
	for _, c := range []struct {
		config Config
		want   []string
	}{
		{Config{"Dense2", nil}, []string{`unknown layer class "Dense2"`, "Activation, Add, AdditiveAttention, Attention, Average", "Reshape"}},
		{Config{"Dense", map[string]any{"units": 3, "unit": 4}}, []string{"Dense layer config", `unknown argument "unit"`}},
		{Config{"Dense", map[string]any{"units": "3"}}, []string{`argument "units" is a JSON string where an integer is wanted`}},
		{Config{"Dense", map[string]any{"units": 2.5}}, []string{`argument "units" is a JSON number 2.5 where an integer is wanted`}},
		{Config{"Dense", map[string]any{}}, []string{`argument "units" is missing`}},
		{Config{"Dense", map[string]any{"units": 0}}, []string{"units must be a positive integer, got 0"}},
		{Config{"Dense", map[string]any{"units": 2, "activation": "mish"}}, []string{`unknown activation "mish"`}},
		{Config{"Dense", map[string]any{"units": 2, "name": "a/b"}}, []string{`must not contain "/"`}},
		{Config{"Flatten", map[string]any{"name": "a/b"}}, []string{"Flatten layer", `must not contain "/"`}},
		{Config{"Dense", map[string]any{"units": 2, "kernel_initializer": Config{"LecunNormal", nil}}},
			[]string{"kernel_initializer", `unknown initializer class "LecunNormal"`, "GlorotUniform"}},
		{Config{"LSTM", map[string]any{"units": 2, "dropout": 1.5}}, []string{"dropout = 1.5", "in [0, 1)"}},
		{Config{"GRU", map[string]any{"units": 2, "recurrent_dropout": 0.5, "reset_after": false}}, []string{"recurrent_dropout = 0.5", "takes 0 with reset_after=False only"}},
		{Config{"LSTM", map[string]any{"units": 2, "reset_after": false}}, []string{`unknown argument "reset_after"`}},
		{Config{"SimpleRNN", map[string]any{"units": 2, "stateful": true}}, []string{"stateful = true"}},
		{Config{"Bidirectional", map[string]any{"layer": map[string]any{"class_name": "Dense", "config": map[string]any{"units": 2}}}}, []string{"Bidirectional wraps a SimpleRNN, LSTM or GRU"}},
		{Config{"Bidirectional", map[string]any{"layer": map[string]any{"class_name": "LSTM", "config": map[string]any{"units": 2}}, "merge_mode": "max"}}, []string{`merge mode "max"`}},
		{Config{"SimpleRNN", map[string]any{"units": 2, "recurrent_activation": "sigmoid"}}, []string{`unknown argument "recurrent_activation"`}},
		{Config{"LSTM", map[string]any{}}, []string{`argument "units" is missing`}},
		{Config{"Dense", map[string]any{"units": 2, "kernel_initializer": "glorot_uniform"}},
			[]string{`argument "kernel_initializer" is a JSON string where an object is wanted`}},
		{Config{"Dense", map[string]any{"units": 2, "kernel_initializer": Config{"RandomNormal", map[string]any{"seed": 1}}}},
			[]string{"kernel_initializer", "RandomNormal", `unknown argument "seed"`}},
		{Config{"Dense", map[string]any{"units": 2, "bias_regularizer": Config{"L3", nil}}},
			[]string{"bias_regularizer", `unknown regularizer class "L3"`}},
		{Config{"Dense", map[string]any{"units": 2, "kernel_regularizer": Config{"L1", map[string]any{"l2": 1}}}},
			[]string{"kernel_regularizer", `L1: unknown argument "l2"`}},
		{Config{"Rescaling", map[string]any{"offset": 1}}, []string{`argument "scale" is missing`}},
		{Config{"RandomFlip", map[string]any{"mode": "diagonal"}}, []string{`mode "diagonal"`, `"horizontal_and_vertical"`}},
		{Config{"RandomZoom", map[string]any{"width_factor": 0.1}}, []string{`argument "height_factor" is missing`}},
		{Config{"RandomRotation", nil}, []string{`argument "factor" is missing`}},
		{Config{"RandomBrightness", map[string]any{"factor": 1.5}}, []string{"factor [-1.5 1.5]", "between -1 and 1"}},
		{Config{"RandomContrast", map[string]any{"factor": -0.1}}, []string{"factor [-0.1 -0.1]", "must not be negative"}},
		{Config{"RandomContrast", map[string]any{"factor": []float64{1.5, 2}}}, []string{"factor [1.5 2]", "not above 1"}},
		{Config{"RandomBrightness", map[string]any{"factor": 0.1, "value_range": []float64{1, 0}}}, []string{"value range [1 0]", "low < high"}},
		{Config{"RandomRotation", map[string]any{"factor": -0.1}}, []string{"factor [0.1 -0.1]", "upper bound is less"}},
		{Config{"RandomZoom", map[string]any{"height_factor": []float64{-1.5, 0}}}, []string{"height_factor [-1.5 0]", "at least -1"}},
		{Config{"RandomZoom", map[string]any{"height_factor": 0.1, "width_factor": []float64{0.3, 0.2}}}, []string{"width_factor [0.3 0.2]", "upper bound is less"}},
		{Config{"RandomTranslation", map[string]any{"height_factor": 0.1}}, []string{`argument "width_factor" is missing`}},
		{Config{"RandomTranslation", map[string]any{"height_factor": []float64{0.1, 0.2, 0.3}, "width_factor": 0}}, []string{`"height_factor" is [0.1,0.2,0.3]`, "a list of two"}},
		{Config{"RandomTranslation", map[string]any{"height_factor": 1.5, "width_factor": 0}}, []string{"height_factor [-1.5 1.5]", "between -1 and 1"}},
		{Config{"RandomTranslation", map[string]any{"height_factor": 0, "width_factor": -0.1}}, []string{"width_factor [0.1 -0.1]", "upper bound is less than the lower"}},
		{Config{"RandomTranslation", map[string]any{"height_factor": 0, "width_factor": 0, "fill_mode": "mirror"}}, []string{`fill mode "mirror"`, `"reflect"`}},
		{Config{"RandomTranslation", map[string]any{"height_factor": 0, "width_factor": 0, "interpolation": "bicubic"}}, []string{`interpolation "bicubic"`}},
		{Config{"Conv2D", map[string]any{"kernel_size": []int{3}}}, []string{`argument "filters" is missing`}},
		{Config{"Conv2D", map[string]any{"filters": 2}}, []string{`argument "kernel_size" is missing`}},
		{Config{"Conv1D", map[string]any{"filters": 2, "kernel_size": []int{3, 3}}}, []string{"kernel_size [3 3]", "one per axis (1)"}},
		{Config{"Conv2D", map[string]any{"filters": 2, "kernel_size": []int{3}, "padding": "full"}}, []string{`padding "full"`}},
		{Config{"Conv2D", map[string]any{"filters": 2, "kernel_size": []int{3}, "strides": []int{1, 2, 3}}}, []string{"strides [1 2 3]"}},
		{Config{"MaxPooling2D", map[string]any{"pool_size": []int{0}}}, []string{"pool_size [0]"}},
		{Config{"GlobalMaxPooling2D", map[string]any{"pool_size": []int{2}}}, []string{`unknown argument "pool_size"`}},
		{Config{"Dropout", map[string]any{}}, []string{`argument "rate" is missing`}},
		{Config{"Dropout", map[string]any{"rate": 1}}, []string{"the rate must be in [0, 1), got 1"}},
		{Config{"Dropout", map[string]any{"rate": 0.5, "seed": -1}}, []string{`argument "seed" is a JSON number -1 where an integer >= 0 is wanted`}},
		{Config{"BatchNormalization", map[string]any{"axis": 1}}, []string{"axis 1", "last axis only"}},
		{Config{"BatchNormalization", map[string]any{"momentum": 2}}, []string{"momentum must be in [0, 1], got 2"}},
		{Config{"LayerNormalization", map[string]any{"momentum": 0.9}}, []string{`unknown argument "momentum"`}},
		{Config{"Embedding", map[string]any{"output_dim": 2}}, []string{`argument "input_dim" is missing`}},
		{Config{"Embedding", map[string]any{"input_dim": 2}}, []string{`argument "output_dim" is missing`}},
		{Config{"Reshape", nil}, []string{`argument "target_shape" is missing`}},
		{Config{"Permute", nil}, []string{`argument "dims" is missing`}},
		{Config{"Reshape", map[string]any{"target_shape": "2,3"}}, []string{`argument "target_shape" is a JSON string where a list of integers is wanted`}},
		{Config{"Activation", nil}, []string{`argument "activation" is missing`}},
		{Config{"InputLayer", nil}, []string{`argument "batch_shape" is missing`}},
		{Config{"InputLayer", map[string]any{"batch_shape": []any{32, 3}}}, []string{"the batch axis must be null"}},
		{Config{"InputLayer", map[string]any{"batch_shape": []any{nil, nil}}}, []string{"axis 1 is null"}},
		{Config{"ZeroPadding2D", map[string]any{"padding": "same"}}, []string{`argument "padding" is "same"`, "((top, bottom), (left, right))"}},
		{Config{"ZeroPadding2D", map[string]any{"padding": []int{1, 2, 3}}}, []string{`argument "padding" is [1,2,3]`}},
		{Config{"ZeroPadding2D", map[string]any{"padding": -1}}, []string{"ZeroPadding2D layer", "every value must be 0 or more"}},
		{Config{"ZeroPadding2D", map[string]any{"data_format": "channels_first"}}, []string{`data_format "channels_first" is not supported`, "channels_last"}},
		{Config{"Cropping2D", map[string]any{"cropping": []any{[]int{1}, []int{2, 3}}}}, []string{`argument "cropping" is [[1],[2,3]]`}},
		{Config{"Cropping2D", map[string]any{"data_format": "channels_first"}}, []string{`data_format "channels_first" is not supported`}},
		{Config{"UpSampling2D", map[string]any{"interpolation": "bilinear"}}, []string{`interpolation "bilinear" is not supported yet`, `"nearest"`}},
		{Config{"UpSampling2D", map[string]any{"size": []int{2, 2, 2}}}, []string{`argument "size" is [2,2,2]`}},
		{Config{"UpSampling2D", map[string]any{"size": 0}}, []string{"size (0, 0): both must be 1 or more"}},
		{Config{"ReLU", map[string]any{"max_value": 6}}, []string{"max_value 6", "not supported yet"}},
		{Config{"ReLU", map[string]any{"negative_slope": 0.1}}, []string{"negative_slope 0.1", "not supported yet"}},
		{Config{"ReLU", map[string]any{"alpha": 0.1}}, []string{`unknown argument "alpha"`}},
	} {
		_, err := FromConfig(c.config)
		if err == nil {
			t.Errorf("%v: no error", c.config)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: the error does not say %q:\n%v", c.config, w, err)
			}
		}
	}
}

type opaqueInit struct{ Initializer }

// TestConfigOfErrors checks that what has no config is an error naming it.
func TestConfigOfErrors(t *testing.T) {
	for _, c := range []struct {
		layer Layer
		want  []string
	}{
		{nil, []string{"no layer"}},
		{(*DenseLayer)(nil), []string{"no layer"}},
		{struct{ Layer }{Flatten(Named("mine"))}, []string{`layer "mine"`, "struct { layers.Layer }", "has no config", "SaveWeights"}},
		{Dense(2, KernelInitializer(opaqueInit{Ones()})), []string{"kernel_initializer", `initializer "ones"`, "layers.opaqueInit", "has no config"}},
		{Dense(2, BiasInitializer(nil)), []string{"bias_initializer", "no initializer"}},
		{Embedding(2, 2, EmbeddingsInitializer(opaqueInit{Ones()})), []string{"embeddings_initializer", "layers.opaqueInit"}},
	} {
		_, err := ConfigOf(c.layer)
		if err == nil {
			t.Errorf("%T: no error", c.layer)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%T: the error does not say %q:\n%v", c.layer, w, err)
			}
		}
	}
}

// TestPlanBuildMatchesBuild checks that PlanBuild gives the output shape
// and the weights' names and shapes Build makes, for every layer of the
// config cases, and fails where Build fails, leaving the layer unbuilt.
func TestPlanBuildMatchesBuild(t *testing.T) {
	for _, c := range configCases() {
		l, err := FromConfig(must(ConfigOf(c.layer)))
		if err != nil {
			t.Fatal(err)
		}
		if _, multi := l.(MultiInputLayer); multi {
			continue // planned by PlanInputs (TestMergeShapes)
		}
		out, ws, err := PlanBuild(l, c.input)
		if err != nil {
			t.Errorf("%s: %v", c.want[:40], err)
			continue
		}
		if len(l.Params()) != 0 {
			t.Errorf("%s: PlanBuild built the layer", c.want[:40])
		}
		wantOut, err := l.Build(c.input, rand.New(rand.NewPCG(1, 2)))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out, wantOut) {
			t.Errorf("%s: planned output %v, Build's %v", c.want[:40], out, wantOut)
		}
		params := l.Params()
		if len(ws) != len(params) {
			t.Errorf("%s: planned %v, Build made %d weights", c.want[:40], ws, len(params))
			continue
		}
		for i, p := range params {
			if ws[i].Name != p.Name || !slices.Equal(ws[i].Shape, p.Value.Shape()) {
				t.Errorf("%s: planned weight %d %v, Build's %s %v", c.want[:40], i, ws[i], p.Name, p.Value.Shape())
			}
		}
	}
	for _, c := range []struct {
		layer Layer
		input []int
	}{
		{Dense(2), []int{}},
		{Dense(0), []int{3}},
		{Conv2D(2, 5), []int{4, 4, 1}},
		{Conv1D(2, 3), []int{4, 4, 1}},
		{MaxPooling2D(PoolSize(3)), []int{2, 2, 1}},
		{GlobalAveragePooling1D(), []int{4}},
		{Embedding(3, 2), nil},
		{LayerNormalization(), nil},
		{BatchNormalization(Momentum(3)), []int{2}},
		{Flatten(), []int{2, 0}},
		{Reshape([]int{5}), []int{2, 3}},
		{Dropout(1), []int{2}},
		{NewActivation(ReLU, Named("a/b")), []int{2}},
		{struct{ Layer }{Flatten()}, []int{2}},
		{(*ConvLayer)(nil), []int{2}},
	} {
		if _, _, err := PlanBuild(c.layer, c.input); err == nil {
			t.Errorf("PlanBuild(%s, %v) planned it", c.layer.Type(), c.input)
		}
		if _, ok := c.layer.(struct{ Layer }); ok || configargs.IsNil(c.layer) {
			continue
		}
		if _, err := c.layer.Build(c.input, rand.New(rand.NewPCG(1, 2))); err == nil {
			t.Errorf("Build(%s, %v) built it: the case is wrong", c.layer.Type(), c.input)
		}
	}
}
