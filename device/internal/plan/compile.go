package plan

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/gokeras/gokeras/ops"
	"github.com/gokeras/gokeras/optim"
	"gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// None marks an absent buffer among a step's operands.
const None = -1

// Role says where a buffer's contents come from.
type Role int

const (
	// Temp buffers are written by a step.
	Temp Role = iota
	// Input buffers hold a graph input that is not learnable (the batch and
	// its labels): copied from the node's host value before every run.
	Input
	// Weight buffers hold a learnable.
	Weight
	// Const buffers hold a constant of the graph (the seed of the loss
	// gradient), copied once when the machine is made.
	Const
	// State buffers hold a non-trainable weight that training steps
	// update (a MovingAverage step's: BatchNormalization's moving
	// statistics). Like a Weight, the model's machines share it on the
	// device, and it is copied in from the host only when the host may be
	// ahead and back only when asked (driver.State.Sync).
	State
)

var roleNames = [...]string{Temp: "temp", Input: "input", Weight: "weight", Const: "const", State: "state"}

func (r Role) String() string {
	if r < 0 || int(r) >= len(roleNames) {
		return fmt.Sprintf("Role(%d)", int(r))
	}
	return roleNames[r]
}

// Buffer is one block of device memory: float32s, Elems of them.
type Buffer struct {
	Elems int
	Role  Role
	// Node is the node whose value the buffer holds; reshapes share their
	// input's buffer.
	Node *gorgonia.Node
	// Data is a Const buffer's value.
	Data []float32
}

// Kind is what a step computes.
type Kind int

// Steps. Each lists its operands In and results Out by buffer index; the
// positions are fixed per kind, None where an optional operand is absent.
const (
	// Gemm: Out[0] = op(In[0])·op(In[1]); op(a) is M×K, op(b) K×N,
	// transposed as TransA, TransB say (the products of Affine and of its
	// gradients). With a third operand (Capabilities.BiasInGemm), Out[0]
	// = In[2] broadcast over the M rows, plus the product.
	Gemm Kind = iota + 1
	// BiasAct: v = In[0] + In[1] (the bias, broadcast over M rows of N;
	// None: no bias); Out[0] = v and Out[1] = Act(v), each where not None.
	// Act is an elementwise activation.
	BiasAct
	// Softmax: Out[0] = softmax of each of the M rows of In[0] (N columns).
	Softmax
	// ActGrad: Out[0] = Act'·In[2] given x = In[0], y = In[1]
	// (elementwise activations; M×N values).
	ActGrad
	// SoftmaxGrad: Out[0] = y·(dy - Σ y·dy) per row, y = In[0], dy = In[1].
	SoftmaxGrad
	// SumRows: Out[0][c] = Σ_r In[0][r, c] over M rows of N.
	SumRows
	// Loss: Out[0] (one value) = batch mean of Loss(In[0], In[1]), M rows;
	// with an In[2], each row's loss times its weight In[2][r] (the mean
	// still over the M rows).
	Loss
	// LossGrad: Out[0] = In[2][0] · ∂Loss/∂In[0]; with an In[3], the
	// rows' sample weights.
	LossGrad
	// Update: the optimizer's step on learnable Learnable, whose values
	// are In[0] and whose gradient In[1] (computed by an earlier step).
	Update
	// GradUpdate: the step Of, which computes the gradient of learnable
	// Learnable (a Gemm or a SumRows), with the optimizer's step folded in:
	// the gradient need never exist as a whole. In[0] is the weight, and
	// Of.In the gradient's operands. Only backends whose Capabilities
	// have FusedUpdate get these steps.
	GradUpdate
	// Patches: Out[0] = the Window's patches of the images In[0], one row
	// of KH·KW·C values per window position (ops.PatchesForward).
	Patches
	// PatchesGrad: Out[0] = the image gradient given the patch gradient
	// In[0] (ops.PatchesBackward), overwritten, not added to.
	PatchesGrad
	// Pool: Out[0] = Pool pooling of the images In[0] over Window
	// (ops.PoolForward).
	Pool
	// PoolGrad: Out[0] = dx given x = In[0], y = In[1], dy = In[2]
	// (ops.PoolBackward).
	PoolGrad
	// Dropout: Out[0] = In[0] with Dropout's dropped units zeroed and the
	// rest scaled, for the step and first row held by In[1]
	// (ops.StepValues); M values, N a row (ops.DropoutForward).
	Dropout
	// Norm: Out[0] = the normalization Norm of the M×N matrix In[0], its
	// other inputs In[1:] as ops.NormKind lists them (ops.NormForward);
	// for a BatchNormGrad with an Out[1], also gamma's gradient there
	// (Capabilities.GammaInNormGrad), and with an Out[2] also the column
	// sums of Out[0] there (Capabilities.BiasInNormGrad); for a BatchNorm
	// with an In[5], that tensor added to the normalized values
	// (Capabilities.AddInBatchNorm); for a ColumnMean
	// with an Out[1], also the ColumnVariance about that mean there
	// (Capabilities.MomentsInOneStep).
	Norm
	// Gather: Out[0] (M×N) = the rows of the table In[0] (K×N) at the M
	// indices In[1] (ops.GatherForward).
	Gather
	// ScatterAdd: Out[0] (K×N) = the table's gradient given the M indices
	// In[0] and the gradient In[1] (M×N) of Gather's output
	// (ops.ScatterAddForward).
	ScatterAdd
	// Add: Out[0] = In[0] + In[1], N values: gorgonia's sum of the
	// gradients a node gets along two paths.
	Add
	// Penalty: Out[0] (one value) = the regularization penalty of the N
	// values of In[0] (ops.PenaltyValue).
	Penalty
	// PenaltyGrad: Out[0] = In[1][0]·∂penalty/∂In[0], N values
	// (ops.PenaltyGradient).
	PenaltyGrad
	// GlobalNorm: Out[0] (one value) = optim.GlobalScale(ClipNorm, the
	// gradients In...): the factor of a step clipping by global norm,
	// which its Update steps then read as their In[2].
	GlobalNorm
	// MetricState: Out[0] (two values) = Metric's sum over the M rows of the
	// outputs In[0] (N columns) against the labels In[1] (K columns), and
	// its count of bad labels (ops.MetricBatch).
	MetricState
	// Reduce: the machine hands the gradients In (one per learnable, in
	// order) to the host's reducer (driver.MachineOptions.ReduceGradients),
	// which replaces them in place: the all-reduce of data-parallel
	// training. Backends never see it.
	Reduce
	// ReduceStart: the machine hands the gradients In, complete, to the
	// host's reducer in the background and goes on with the next steps
	// (OverlappedTrainingSteps); ReduceWait waits for every ReduceStart
	// before it. Backends never see them.
	ReduceStart
	ReduceWait
	// MovingAverage: In[0], a State buffer of N values, becomes
	// Op.Moving.Momentum·In[0] + (1-Momentum)·In[1]·Bessel, in place
	// (Out[0] is In[0]; ops.MovingUpdate's arithmetic): the update of a
	// non-trainable weight from a statistic of the batch. The plan keeps
	// these steps apart (Plan.Moving): training steps run them after the
	// plan's steps, RunAll never does.
	MovingAverage
	// Binary: Out[0] (N values) = Op.Binary.Kind of In[0] and In[1],
	// broadcast as Op.Binary.Layout() maps them (ops.BinaryForward).
	Binary
	// BinaryGrad: Out[0] (N values, input Op.Binary.Wrt's) = that input's
	// gradient given a = In[0], b = In[1] and the output's gradient
	// dy = In[2] (ops.BinaryBackward).
	BinaryGrad
	// Scale: Out[0] = In[0]·Op.Scale.Factor (or /Factor), N values
	// (ops.ScaleForward).
	Scale
	// Concat: Out[0] = the inputs In joined along Op.Concat.Axis: M rows
	// (Op.Concat.Rows()) of N values (Op.Concat.OutCols()), input i's
	// Op.Concat.Cols(i) values of each row from Op.Concat.Offset(i)
	// (ops.ConcatForward).
	Concat
	// ConcatGrad: Out[0] = input Op.Concat.Piece's slice of In[0], the
	// gradient of a Concat's output, M rows of N (that input's Cols)
	// (ops.ConcatBackward).
	ConcatGrad
	// Pad2D: Out[0] (N values, Op.Pad2D.Large()) = the images In[0]
	// (Op.Pad2D.Small()) with rows and columns of zeros around
	// (ops.Pad2DForward): a ZeroPadding2D, or a Cropping2D's gradient.
	Pad2D
	// Crop2D: Out[0] (N values, Op.Pad2D.Small()) = the images In[0]
	// (Op.Pad2D.Large()) cropped (ops.Crop2DForward): a Cropping2D, or a
	// ZeroPadding2D's gradient.
	Crop2D
	// UpSample: Out[0] (N values, Op.UpSample.Out()) = each pixel of the
	// images In[0] repeated (ops.UpSampleForward).
	UpSample
	// UpSampleGrad: Out[0] (N values, Op.UpSample.In()) = each pixel's
	// block of In[0], the gradient of an UpSample's output, summed
	// (ops.UpSampleBackward).
	UpSampleGrad
	// BatchMatMul: Out[0] = for each of Op.BatchMatMul.Batch samples,
	// op(In[0])·op(In[1]), M×K by K×N, transposed as Op.BatchMatMul says
	// (ops.BatchMatMulForward): a Dot layer's product and its gradients.
	BatchMatMul
	// L2Normalize: Out[0] (N values) = In[0] divided by its L2 norm along
	// Op.L2Norm.Axis (ops.L2NormalizeForward).
	L2Normalize
	// L2NormalizeGrad: Out[0] (N values) = the gradient of an
	// L2Normalize's input x = In[0] given its output's, dy = In[1]
	// (ops.L2NormalizeBackward).
	L2NormalizeGrad
	// ImageTransform: Out[0] = the M images In[0] each transformed by the
	// map Op.Transform draws for it at the step and first row held by
	// In[1] (ops.StepValues; ops.TransformForward).
	ImageTransform
	// Resize: Out[0] (N values, Op.Resize.Out()) = a box of each of the
	// images In[0] resized (ops.ResizeForward).
	Resize
	// The convolution steps, which the compiler makes of a
	// convolution's patches and products where the backend offers them
	// (Capabilities.Conv): Op.Window is the convolution's window, K its
	// filters, M its output positions and N the kernel's rows (KH·KW·C).
	// The images and the output's gradient are laid on grids of the
	// backend's (ConvMemory), which the other steps read; where the
	// backend needs no grid, they read the tensors themselves.
	//
	// ConvInputGrid: Out[0] = the images In[0] on their grid (it stands
	// for the Patches step).
	ConvInputGrid
	// ConvOutputGrid: Out[0] = the output's gradient In[0] (M×K) on its
	// grid.
	ConvOutputGrid
	// ConvForward: Out[0] (M×K) = the convolution of the images' grid
	// In[0] with the kernel In[1] (N×K), plus the bias In[2] (or None);
	// Out[1] is scratch (it stands for the forward product).
	ConvForward
	// ConvKernelGrad: Out[0] (N×K) = the kernel's gradient from the
	// images' grid In[0] and the output gradient's In[1]; Out[1] is
	// scratch (it stands for the product patchesᵀ·dz).
	ConvKernelGrad
	// ConvInputGrad: Out[0] = the images' gradient from the output
	// gradient's grid In[0] and the kernel In[1]; Out[1] is scratch (it
	// stands for the product dz·kᵀ and the PatchesGrad after it).
	ConvInputGrad
	// Recurrence: Out[0] = a recurrent layer's output given the inputs'
	// projections In[0], the recurrent kernel In[1] and the optional
	// inputs after them (ops.RecurrenceParams.Inputs: a GRU's recurrent
	// bias, initial states, a mask; ops.RecurrenceForwardInputs); Out[1]
	// is scratch of Op.Recurrence.Workspace() values.
	Recurrence
	// RecurrenceGrad: Out[0] = the gradients of a Recurrence's inputs,
	// one after another, given them and the gradient of its output, the
	// In after them (ops.RecurrenceBackwardInputs); Out[1] is scratch as
	// Recurrence's. With Op.Recurrence.Saved it is the Recurrence step's
	// scratch, holding its planes, and the last of In too.
	RecurrenceGrad
	// Mask: Out[0] (M values) = the sequence mask of In[0], M rows of N
	// values each (ops.MaskForward).
	Mask
	// Permute: Out[0] (N values, Op.Permute.Out()) = In[0] with its axes
	// reordered (ops.PermuteForward): a Permute layer, a batch of
	// transposes (Op.Permute.Transposes), or either's gradient.
	Permute
)

var kindNames = [...]string{Gemm: "Gemm", BiasAct: "BiasAct", Softmax: "Softmax", ActGrad: "ActGrad",
	SoftmaxGrad: "SoftmaxGrad", SumRows: "SumRows", Loss: "Loss", LossGrad: "LossGrad", Update: "Update",
	GradUpdate: "GradUpdate", Patches: "Patches", PatchesGrad: "PatchesGrad", Pool: "Pool", PoolGrad: "PoolGrad",
	Dropout: "Dropout", Norm: "Norm", Gather: "Gather", ScatterAdd: "ScatterAdd",
	Add: "Add", Penalty: "Penalty", PenaltyGrad: "PenaltyGrad", GlobalNorm: "GlobalNorm", MetricState: "MetricState", Reduce: "Reduce",
	ReduceStart: "ReduceStart", ReduceWait: "ReduceWait", MovingAverage: "MovingAverage", Binary: "Binary", BinaryGrad: "BinaryGrad",
	Scale: "Scale", Concat: "Concat", ConcatGrad: "ConcatGrad", Pad2D: "Pad2D", Crop2D: "Crop2D", UpSample: "UpSample",
	UpSampleGrad: "UpSampleGrad", BatchMatMul: "BatchMatMul", L2Normalize: "L2Normalize", L2NormalizeGrad: "L2NormalizeGrad",
	ImageTransform: "ImageTransform", Resize: "Resize", ConvInputGrid: "ConvInputGrid",
	ConvOutputGrid: "ConvOutputGrid", ConvForward: "ConvForward", ConvKernelGrad: "ConvKernelGrad", ConvInputGrad: "ConvInputGrad",
	Recurrence: "Recurrence", RecurrenceGrad: "RecurrenceGrad", Mask: "Mask", Permute: "Permute"}

func (k Kind) String() string {
	if k <= 0 || int(k) >= len(kindNames) {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k]
}

// Step is one kernel launch or cuBLAS call.
type Step struct {
	Kind Kind
	// Op is the ops.Info of the op the step runs, as ops.Inspect gives
	// it: its activation, loss and loss parameters, transposes, window,
	// pooling, dropout, normalization, penalty or metric. It is where a
	// backend reads an op's parameters; backends never go back to Node. A
	// BiasAct step's Op is that of the activation it applies (an
	// OpActivation of ops.Linear when it only adds the bias); a Gemm's that
	// of its Affine or MatMul. Steps the compiler adds (Add, Update,
	// GradUpdate, GlobalNorm, Reduce...) have none.
	Op ops.Info
	// Name is the name of the node the step computes (or, for an Update,
	// of the learnable it updates), for errors.
	Name string
	// Node is the graph node the step computes; Fused, when not nil, the
	// node of a step folded into this one: an activation into a BiasAct
	// step, a ReLU or its gradient into the step before (reluFolds,
	// reluGradFolds). They are the plan's and
	// its machine's: backends read Op and Name instead.
	Node, Fused *gorgonia.Node
	M, N, K     int
	In, Out     []int
	// Learnable is the index of the weight an Update or GradUpdate
	// updates, in Plan.Learnables.
	Learnable int
	// Of is the gradient step a GradUpdate folds the update into.
	Of *Step
	// ClipNorm is a GlobalNorm step's.
	ClipNorm float64
}

func (s Step) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v", s.Kind)
	switch s.Kind {
	case Gemm:
		fmt.Fprintf(&b, "{%d×%d×%d transA=%t transB=%t}", s.M, s.K, s.N, s.Op.TransA, s.Op.TransB)
	case BiasAct, ActGrad:
		fmt.Fprintf(&b, "{%s %d×%d}", s.Op.Activation, s.M, s.N)
	case Loss, LossGrad:
		fmt.Fprintf(&b, "{%s %d×%d}", s.Op.Loss, s.M, s.N)
	case Update:
		fmt.Fprintf(&b, "{learnable %d}", s.Learnable)
	case GradUpdate:
		fmt.Fprintf(&b, "{learnable %d: %v}", s.Learnable, s.Of)
	case Patches, PatchesGrad:
		fmt.Fprintf(&b, "{%v}", s.Op.Window)
	case ConvInputGrid, ConvOutputGrid, ConvForward, ConvKernelGrad, ConvInputGrad:
		fmt.Fprintf(&b, "{%v, %d filters}", s.Op.Window, s.K)
	case Pool, PoolGrad:
		fmt.Fprintf(&b, "{%v %v}", s.Op.Pool, s.Op.Window)
	case Dropout:
		fmt.Fprintf(&b, "{rate %v, %d values}", s.Op.Dropout.Rate, s.M)
	case ImageTransform:
		fmt.Fprintf(&b, "{%v, %d images}", s.Op.Transform, s.M)
	case Norm:
		fmt.Fprintf(&b, "{%v %d×%d}", s.Op.Norm, s.M, s.N)
	case Gather, ScatterAdd:
		fmt.Fprintf(&b, "{%d of %d×%d}", s.M, s.K, s.N)
	case Add, Penalty, PenaltyGrad:
		fmt.Fprintf(&b, "{%d values}", s.N)
	case MovingAverage:
		fmt.Fprintf(&b, "{momentum %v, bessel %v, %d values}", s.Op.Moving.Momentum, s.Op.Moving.Factor(), s.N)
	case Binary, BinaryGrad:
		fmt.Fprintf(&b, "{%v %v %v -> %d values}", s.Op.Binary.Kind, s.Op.Binary.A, s.Op.Binary.B, s.N)
	case Scale:
		fmt.Fprintf(&b, "{%v, %d values}", s.Op.Scale, s.N)
	case Concat, ConcatGrad:
		fmt.Fprintf(&b, "{%v, piece %d: %d×%d}", s.Op.Concat, s.Op.Concat.Piece, s.M, s.N)
	case Pad2D, Crop2D:
		fmt.Fprintf(&b, "{%v -> %d values}", s.Op.Pad2D, s.N)
	case UpSample, UpSampleGrad:
		fmt.Fprintf(&b, "{%v -> %d values}", s.Op.UpSample, s.N)
	case Permute:
		fmt.Fprintf(&b, "{%v}", s.Op.Permute)
	case BatchMatMul:
		fmt.Fprintf(&b, "{%v}", s.Op.BatchMatMul)
	case L2Normalize, L2NormalizeGrad:
		fmt.Fprintf(&b, "{%v, %d values}", s.Op.L2Norm, s.N)
	case GlobalNorm:
		fmt.Fprintf(&b, "{clip %v}", s.ClipNorm)
	case Reduce, ReduceStart, ReduceWait:
		fmt.Fprintf(&b, "{%d gradients}", len(s.In))
	default:
		fmt.Fprintf(&b, "{%d×%d}", s.M, s.N)
	}
	fmt.Fprintf(&b, " %v -> %v", s.In, s.Out)
	return b.String()
}

// Read is a gorgonia.Read statement of the graph: after each run the
// machine copies buffer Buf to the host and stores it, as a tensor of
// Shape, in *Into.
type Read struct {
	Buf   int
	Shape tensor.Shape
	Into  *gorgonia.Value
	Node  *gorgonia.Node // the node read
}

// Plan is a compiled graph.
type Plan struct {
	Buffers []Buffer
	Steps   []Step
	Reads   []Read
	// Learnables are the weights, in the order given to Compile, and
	// Grads the buffer of each one's gradient (None when the graph
	// computes none: an inference graph).
	Learnables []*gorgonia.Node
	Grads      []int
	// Scale is a one-value Temp buffer with no node, where a GlobalNorm
	// step writes its factor.
	Scale int
	// Moving are the graph's updates of its State buffers (MovingAverage
	// steps, ops.OpMovingAverage nodes), in graph order: not among Steps,
	// since only a training step runs them (TrainingSteps and its
	// variants, after the plan's steps).
	Moving []Step
	// bufOf maps every node holding a value to its buffer.
	bufOf map[*gorgonia.Node]int
	caps  Capabilities
}

// BufferOf returns the buffer holding n's value.
func (p *Plan) BufferOf(n *gorgonia.Node) (int, bool) {
	b, ok := p.bufOf[n]
	return b, ok
}

// Capabilities are the fusions a backend offers the compiler.
type Capabilities struct {
	// BiasInGemm: the backend adds an Affine's bias inside its product, so
	// the Gemm of an Affine with a bias gets the bias as In[2] (its output
	// starts as the bias broadcast over the rows, then accumulates the
	// product) and only an activation step follows.
	BiasInGemm bool
	// FusedUpdate, when not nil, says whether the backend folds the update
	// into the given gradient step (see GradUpdate). It is never asked for
	// an update that needs a variable's whole gradient first
	// (optim.Update.NeedsWholeGradient).
	FusedUpdate func(grad *Step, u optim.Update) bool
	// Conv, when not nil, says whether the backend computes the
	// convolution over window w (no dilation) with filters
	// filters without its patches (the Conv steps), and the memory it
	// needs for that.
	Conv func(w ops.Window, filters int) (ConvMemory, bool)
	// GammaInNormGrad: the backend computes a BatchNormalization's gamma
	// gradient in its input-gradient step, from the same sums: a Norm step
	// of kind BatchNormGrad with a second output (ops.BatchNormGradWithGamma)
	// stands for it and the BatchNormGammaGrad step of the same x, mean,
	// variance and dy.
	GammaInNormGrad bool
	// BiasInNormGrad: the backend sums the columns of the input gradient
	// a BatchNormalization's gradient step writes, as SumRows sums them,
	// in that step: a BatchNormGrad step with gamma's gradient
	// (GammaInNormGrad) and a third output (ops.BatchNormGradWithBias)
	// stands for itself and the SumRows step of its Out[0], the gradient
	// of a bias added just before the normalization (a convolution's or a
	// dense layer's), which then reads no memory of its own.
	BiasInNormGrad bool
	// AddInBatchNorm: the backend adds a tensor to a BatchNormalization's
	// output in the normalization's pass (ops.BatchNormAdd), then applies
	// the step's activation (ops.ReLU or none): a Norm step of kind
	// BatchNorm with a sixth input stands for itself and the elementwise
	// Binary add of its output and that input (a residual connection's),
	// which alone read its output; the normalized values then take no
	// memory (normAdds).
	AddInBatchNorm bool
	// MomentsInOneStep: the backend computes a BatchNormalization's
	// batch variance in the step of its mean: a Norm step of kind
	// ColumnMean with a second output (ops.ColumnMeanVariance) stands for
	// it and the ColumnVariance step of the same x about that mean.
	MomentsInOneStep bool
	// FoldsReLU, when not nil, says whether the backend applies the ReLU
	// activation at the end of the given step, in its pass over the values,
	// where the step's Op.Activation is ops.ReLU (the CPU backend: a Norm
	// step of kind BatchNorm, ops.BatchNormReLU; a Binary step,
	// ops.BinaryReLUForward; a ConvForward step, blas' ConvForwardReLU).
	// Such a step then stands for itself and the
	// BiasAct step of a ReLU that only follows it (reluFolds).
	FoldsReLU func(s *Step) bool
	// FoldsReLUGrad, when not nil, says whether the backend applies the
	// gradient of a ReLU whose output is buffer y to the output of step s
	// as it computes it (the value where y is above 0, else +0), reading y
	// as the step's last input, where the step's Op.Activation is
	// ops.ReLU (the CPU backend: a ConvInputGrad step, blas'
	// ConvInputGradReLU; the PoolGrad step of a max pooling of y,
	// ops.PoolBackwardReLU; an Add step, ops.AddValuesReLU). Such a step
	// then stands for itself and the
	// ActGrad step of the ReLU, which alone read its output
	// (reluGradFolds).
	FoldsReLUGrad func(s *Step, y int) bool
}

// ConvMemory is the memory, in float32s, of a convolution's steps on a
// backend: the grids of its images and of its output's gradient (0 for
// none: the steps read the tensor itself), and the scratch of
// ConvForward, ConvInputGrad and ConvKernelGrad.
type ConvMemory struct {
	InputGrid, OutputGrid, Forward, InputGrad, KernelGrad int
}

// FoldRows is the most rows of examples (the depth of a weight's gradient
// product) for which a backend folds plain SGD into the product, making
// the weights themselves its output (GradUpdate). The product adds each
// block of its depth into its output as it goes, so with the weights as
// the output every block's sum is rounded to the weights' magnitude:
// harmless for a dense layer's batch of 32, but a convolution's gradient
// sums a row per output pixel (28,800 at batch 32 in Keras' cifar10_cnn),
// and folding it lost an order of magnitude of the update's precision
// against PyTorch's (bench/results/cnn-parity-2026-11-23.txt). Deeper
// products compute the gradient first, then subtract it.
const FoldRows = 1024

// Compile walks g in execution order (inputs first) and maps each node to
// steps. Every node must be an input, a constant, a gorgonia.Read, or an op
// of package ops on float32 values; anything else is an error that names
// the node and its op and says what to do, so a graph the device cannot
// run fails when it is bound, never silently on a slower path. learnables
// are the weights; the gradient of each, when the graph computes it, is its
// Deriv node.
func Compile(g *gorgonia.ExprGraph, learnables []*gorgonia.Node, caps Capabilities) (*Plan, error) {
	if g == nil {
		return nil, fmt.Errorf("nil graph")
	}
	sorted, err := gorgonia.Sort(g)
	if err != nil {
		return nil, fmt.Errorf("sorting the graph: %w", err)
	}
	c := compiler{
		caps:      caps,
		p:         &Plan{bufOf: map[*gorgonia.Node]int{}, caps: caps},
		g:         g,
		learnable: map[*gorgonia.Node]bool{},
		biasStep:  map[*gorgonia.Node]int{},
	}
	for _, l := range learnables {
		c.learnable[l] = true
	}
	for i := len(sorted) - 1; i >= 0; i-- {
		if err := c.node(sorted[i]); err != nil {
			return nil, err
		}
	}
	c.p.Buffers = append(c.p.Buffers, Buffer{Elems: 1, Role: Temp})
	c.p.Scale = len(c.p.Buffers) - 1
	c.p.Learnables = append([]*gorgonia.Node(nil), learnables...)
	c.p.Grads = make([]int, len(learnables))
	for i, l := range learnables {
		c.p.Grads[i] = None
		if _, ok := c.p.bufOf[l]; !ok {
			return nil, fmt.Errorf("learnable %q is not a node of the graph", l.Name())
		}
		d := l.Deriv()
		if d == nil {
			continue
		}
		b, ok := c.p.bufOf[d]
		if !ok {
			return nil, fmt.Errorf("the gradient of %q (%s) is not computed by the graph", l.Name(), d.Name())
		}
		c.p.Grads[i] = b
	}
	c.pointwise()
	c.convolutions()
	c.normGradients()
	c.normBiasSums()
	c.moments()
	c.reluFolds()
	c.normAdds()
	c.reluGradFolds()
	return c.p, nil
}

type compiler struct {
	caps      Capabilities
	p         *Plan
	g         *gorgonia.ExprGraph
	learnable map[*gorgonia.Node]bool
	// biasStep maps an Affine node with a bias to its BiasAct step, where
	// a following elementwise activation is fused.
	biasStep map[*gorgonia.Node]int
	// recurrences maps a Recurrence step's parameters and operands to
	// its scratch buffer, which its gradient reuses.
	recurrences map[string]int
}

func (c *compiler) children(n *gorgonia.Node) []*gorgonia.Node {
	var ch []*gorgonia.Node
	it := c.g.From(n.ID())
	for it.Next() {
		ch = append(ch, it.Node().(*gorgonia.Node))
	}
	return ch
}

// alloc gives n a new buffer.
func (c *compiler) alloc(n *gorgonia.Node, role Role) int {
	c.p.Buffers = append(c.p.Buffers, Buffer{Elems: n.Shape().TotalSize(), Role: role, Node: n})
	id := len(c.p.Buffers) - 1
	c.p.bufOf[n] = id
	return id
}

// buf returns the buffer of an operand computed earlier.
func (c *compiler) buf(n, operand *gorgonia.Node) (int, error) {
	b, ok := c.p.bufOf[operand]
	if !ok {
		return 0, fmt.Errorf("node %q: operand %q has no value on the device (a statement?)", n.Name(), operand.Name())
	}
	return b, nil
}

func (c *compiler) bufs(n *gorgonia.Node, operands []*gorgonia.Node) ([]int, error) {
	ids := make([]int, len(operands))
	for i, o := range operands {
		b, err := c.buf(n, o)
		if err != nil {
			return nil, err
		}
		ids[i] = b
	}
	return ids, nil
}

func (c *compiler) emit(s Step) int {
	s.Name = s.Node.Name()
	c.p.Steps = append(c.p.Steps, s)
	return len(c.p.Steps) - 1
}

// recurrence compiles a Recurrence or RecurrenceGrad node n of operands
// in, each step with its scratch as Out[1]. The gradient of a Recurrence
// of the same operands reuses that step's scratch, which then holds the
// forward pass's planes (ops.RecurrenceParams.Saved): it does not run the
// steps again.
func (c *compiler) recurrence(n *gorgonia.Node, in []int, info ops.Info) error {
	out := c.alloc(n, Temp)
	key := fmt.Sprint(info.Recurrence, in[:len(info.Recurrence.InShapes())])
	if info.Kind == ops.OpRecurrenceGrad {
		if ws, ok := c.recurrences[key]; ok {
			info.Recurrence.Saved = true
			c.emit(Step{Kind: RecurrenceGrad, Op: info, Node: n, N: n.Shape().TotalSize(), In: append(in, ws), Out: []int{out, ws}})
			return nil
		}
	}
	c.p.Buffers = append(c.p.Buffers, Buffer{Elems: info.Recurrence.Workspace(), Role: Temp})
	ws := len(c.p.Buffers) - 1
	kind := RecurrenceGrad
	if info.Kind == ops.OpRecurrence {
		kind = Recurrence
		if c.recurrences == nil {
			c.recurrences = map[string]int{}
		}
		c.recurrences[key] = ws
	}
	c.emit(Step{Kind: kind, Op: info, Node: n, N: n.Shape().TotalSize(), In: in, Out: []int{out, ws}})
	return nil
}

// ErrUnsupported is wrapped by the errors for a graph the plan compiler
// cannot run: a node whose op has no kernel, or a dtype other than float32.
var ErrUnsupported = errors.New("the plan compiler cannot run this graph")

// unsupported is the error for a node no backend has a kernel for.
func unsupported(n *gorgonia.Node, why string) error {
	return fmt.Errorf("%w: node %q: op %v (%T) %s; gokeras machines run the ops of package ops (Affine, Activate, Reshape, Patches, Pool, Dropout, the normalizations, Gather, the merge ops, Loss and their gradients) on float32 values: build the model from package layers, or write the op in package ops with a kernel for each backend", ErrUnsupported, n.Name(), n.Op(), n.Op(), why)
}

func checkFloat32(n *gorgonia.Node) error {
	if n.Dtype() != tensor.Float32 {
		return fmt.Errorf("%w: node %q has dtype %v: gokeras machines compute in float32 only", ErrUnsupported, n.Name(), n.Dtype())
	}
	return nil
}

func (c *compiler) node(n *gorgonia.Node) error {
	op := n.Op()
	if op == nil { // an input: the batch, its labels, or a weight
		if err := checkFloat32(n); err != nil {
			return err
		}
		role := Input
		if c.learnable[n] {
			role = Weight
		}
		c.alloc(n, role)
		return nil
	}
	ch := c.children(n)
	if into, ok := readTarget(op); ok {
		if len(ch) != 1 {
			return fmt.Errorf("node %q: a read with %d operands", n.Name(), len(ch))
		}
		b, err := c.buf(n, ch[0])
		if err != nil {
			return err
		}
		c.p.Reads = append(c.p.Reads, Read{Buf: b, Shape: ch[0].Shape(), Into: into, Node: ch[0]})
		return nil
	}
	if op.Arity() == 0 && len(ch) == 0 { // a constant
		return c.constant(n)
	}
	info, ok := ops.Inspect(op)
	if !ok && isAdd(op) && len(ch) == 2 && ch[0].Shape().TotalSize() == ch[1].Shape().TotalSize() {
		if err := checkFloat32(n); err != nil {
			return err
		}
		in, err := c.bufs(n, ch)
		if err != nil {
			return err
		}
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: Add, Node: n, N: n.Shape().TotalSize(), In: in, Out: []int{out}})
		return nil
	}
	if !ok {
		return unsupported(n, "has no kernel")
	}
	if err := checkFloat32(n); err != nil {
		return err
	}
	in, err := c.bufs(n, ch)
	if err != nil {
		return err
	}
	shapeOf := func(i int) tensor.Shape { return ch[i].Shape() }
	switch info.Kind {
	case ops.OpAffine:
		xs, ws := shapeOf(0), shapeOf(1)
		out := c.alloc(n, Temp)
		if info.Bias && c.caps.BiasInGemm {
			// The bias goes into the product; an activation that follows
			// gets a BiasAct step of its own, without a bias.
			c.emit(Step{Kind: Gemm, Op: info, Node: n, M: xs[0], K: xs[1], N: ws[1], In: []int{in[0], in[1], in[2]}, Out: []int{out}})
			return nil
		}
		c.emit(Step{Kind: Gemm, Op: info, Node: n, M: xs[0], K: xs[1], N: ws[1], In: []int{in[0], in[1]}, Out: []int{out}})
		if info.Bias {
			c.biasStep[n] = c.emit(Step{Kind: BiasAct, Op: ops.Info{Kind: ops.OpActivation, Activation: ops.Linear}, Node: n, M: xs[0], N: ws[1],
				In: []int{out, in[2]}, Out: []int{out, None}})
		}
	case ops.OpMatMul:
		as, bs := shapeOf(0), shapeOf(1)
		m, k := as[0], as[1]
		if info.TransA {
			m, k = k, m
		}
		nn := bs[1]
		if info.TransB {
			nn = bs[0]
		}
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: Gemm, Op: info, Node: n, M: m, K: k, N: nn, In: in, Out: []int{out}})
	case ops.OpSumRows:
		rows, cols := matrix(shapeOf(0))
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: SumRows, Op: info, Node: n, M: rows, N: cols, In: in, Out: []int{out}})
	case ops.OpActivation:
		rows, cols := matrix(shapeOf(0))
		if info.Activation == ops.Softmax {
			out := c.alloc(n, Temp)
			c.emit(Step{Kind: Softmax, Op: info, Node: n, M: rows, N: cols, In: in, Out: []int{out}})
			return nil
		}
		out := c.alloc(n, Temp)
		if si, ok := c.biasStep[ch[0]]; ok && c.p.Steps[si].Out[1] == None {
			// Fold the activation into the bias step of the Affine it follows.
			s := &c.p.Steps[si]
			s.Out[1], s.Op, s.Fused = out, info, n
			return nil
		}
		c.emit(Step{Kind: BiasAct, Op: info, Node: n, M: rows, N: cols, In: []int{in[0], None}, Out: []int{None, out}})
	case ops.OpActivationGrad:
		rows, cols := matrix(shapeOf(0))
		out := c.alloc(n, Temp)
		if info.Activation == ops.Softmax {
			c.emit(Step{Kind: SoftmaxGrad, Op: info, Node: n, M: rows, N: cols, In: []int{in[1], in[2]}, Out: []int{out}})
			return nil
		}
		if info.Activation == ops.ReLU && in[1] >= 0 {
			// ReLU's gradient is dy where its input is above 0: where its
			// output is. Reading the output leaves the input to no later
			// step (the step before can then write the output only:
			// reluFolds).
			in = []int{in[1], in[1], in[2]}
		}
		c.emit(Step{Kind: ActGrad, Op: info, Node: n, M: rows, N: cols, In: in, Out: []int{out}})
	case ops.OpReshape:
		// The same values in another shape: share the buffer.
		c.p.bufOf[n] = in[0]
	case ops.OpLoss:
		rows, cols := matrix(shapeOf(0))
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: Loss, Op: info, Node: n, M: rows, N: cols, In: in, Out: []int{out}})
	case ops.OpLossGrad:
		rows, cols := matrix(shapeOf(0))
		if c.p.Buffers[in[2]].Elems != 1 {
			return fmt.Errorf("node %q: the gradient seed %q is not a scalar", n.Name(), ch[2].Name())
		}
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: LossGrad, Op: info, Node: n, M: rows, N: cols, In: in, Out: []int{out}})
	case ops.OpPatches, ops.OpPatchesGrad:
		kind := Patches
		if info.Kind == ops.OpPatchesGrad {
			kind = PatchesGrad
		}
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: kind, Op: info, Node: n, In: in, Out: []int{out}})
	case ops.OpPool, ops.OpPoolGrad:
		kind := Pool
		if info.Kind == ops.OpPoolGrad {
			kind = PoolGrad
		}
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: kind, Op: info, Node: n, In: in, Out: []int{out}})
	case ops.OpDropout:
		if c.p.Buffers[in[1]].Elems != ops.StepValueCount {
			return fmt.Errorf("node %q: the dropout's step input %q does not hold %d values", n.Name(), ch[1].Name(), ops.StepValueCount)
		}
		out := c.alloc(n, Temp)
		size, perRow := n.Shape().TotalSize(), 0
		if s := n.Shape(); len(s) > 0 && s[0] > 0 {
			perRow = size / s[0]
		}
		c.emit(Step{Kind: Dropout, Op: info, Node: n, M: size, N: perRow, In: in, Out: []int{out}})
	case ops.OpImageTransform:
		if c.p.Buffers[in[1]].Elems != ops.StepValueCount {
			return fmt.Errorf("node %q: the image transform's step input %q does not hold %d values", n.Name(), ch[1].Name(), ops.StepValueCount)
		}
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: ImageTransform, Op: info, Node: n, M: shapeOf(0)[0], N: n.Shape().TotalSize(), In: in, Out: []int{out}})
	case ops.OpNorm:
		rows, cols := matrix(shapeOf(0))
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: Norm, Op: info, Node: n, M: rows, N: cols, In: in, Out: []int{out}})
	case ops.OpGather:
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: Gather, Op: info, Node: n, M: shapeOf(1).TotalSize(), K: info.Rows, N: info.Width, In: in, Out: []int{out}})
	case ops.OpPenalty:
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: Penalty, Op: info, Node: n, N: shapeOf(0).TotalSize(), In: in, Out: []int{out}})
	case ops.OpPenaltyGrad:
		if c.p.Buffers[in[1]].Elems != 1 {
			return fmt.Errorf("node %q: the gradient seed %q is not a scalar", n.Name(), ch[1].Name())
		}
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: PenaltyGrad, Op: info, Node: n, N: shapeOf(0).TotalSize(), In: in, Out: []int{out}})
	case ops.OpBinary, ops.OpBinaryGrad, ops.OpScale:
		if b := info.Binary; info.Kind == ops.OpBinaryGrad && slices.Equal(b.A, b.B) &&
			(b.Kind == ops.BinaryAdd || b.Kind == ops.BinarySubtract && b.Wrt == 0) {
			// The gradient of a sum (or of a difference's first input)
			// without broadcasting is the output's: share its buffer.
			c.p.bufOf[n] = in[2]
			return nil
		}
		kind := map[ops.OpKind]Kind{ops.OpBinary: Binary, ops.OpBinaryGrad: BinaryGrad, ops.OpScale: Scale}[info.Kind]
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: kind, Op: info, Node: n, N: n.Shape().TotalSize(), In: in, Out: []int{out}})
	case ops.OpConcat:
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: Concat, Op: info, Node: n, M: info.Concat.Rows(), N: info.Concat.OutCols(), In: in, Out: []int{out}})
	case ops.OpConcatGrad:
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: ConcatGrad, Op: info, Node: n, M: info.Concat.Rows(), N: info.Concat.Cols(info.Concat.Piece), In: in, Out: []int{out}})
	case ops.OpPad2D, ops.OpCrop2D, ops.OpUpSample2D, ops.OpUpSample2DGrad, ops.OpResize, ops.OpPermute:
		kind := map[ops.OpKind]Kind{ops.OpPad2D: Pad2D, ops.OpCrop2D: Crop2D, ops.OpUpSample2D: UpSample, ops.OpUpSample2DGrad: UpSampleGrad,
			ops.OpResize: Resize, ops.OpPermute: Permute}[info.Kind]
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: kind, Op: info, Node: n, N: n.Shape().TotalSize(), In: in, Out: []int{out}})
	case ops.OpBatchMatMul:
		p := info.BatchMatMul
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: BatchMatMul, Op: info, Node: n, M: p.M, K: p.K, N: p.N, In: in, Out: []int{out}})
	case ops.OpL2Normalize, ops.OpL2NormalizeGrad:
		kind := map[ops.OpKind]Kind{ops.OpL2Normalize: L2Normalize, ops.OpL2NormalizeGrad: L2NormalizeGrad}[info.Kind]
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: kind, Op: info, Node: n, N: n.Shape().TotalSize(), In: in, Out: []int{out}})
	case ops.OpMask:
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: Mask, Op: info, Node: n, M: info.Mask.Rows, N: info.Mask.Width, In: in, Out: []int{out}})
	case ops.OpRecurrence, ops.OpRecurrenceGrad:
		return c.recurrence(n, in, info)
	case ops.OpMetricState:
		rows, cols := matrix(shapeOf(0))
		_, yCols := matrix(shapeOf(1))
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: MetricState, Op: info, Node: n, M: rows, N: cols, K: yCols, In: in, Out: []int{out}})
	case ops.OpScatterAdd:
		out := c.alloc(n, Temp)
		c.emit(Step{Kind: ScatterAdd, Op: info, Node: n, M: shapeOf(0).TotalSize(), K: info.Rows, N: info.Width, In: in, Out: []int{out}})
	case ops.OpMovingAverage:
		return c.moving(n, ch, in, info)
	default:
		return unsupported(n, fmt.Sprintf("(ops kind %d) has no kernel yet", info.Kind))
	}
	return nil
}

// moving compiles an update of a non-trainable weight (an
// ops.OpMovingAverage node n of operands ch, in their buffers in): the
// weight, an input of the graph that is not learnable, becomes a State
// buffer, and the update a MovingAverage step of Plan.Moving that writes
// it in place. The node's value is the weight's buffer, once updated.
func (c *compiler) moving(n *gorgonia.Node, ch []*gorgonia.Node, in []int, info ops.Info) error {
	w, stat := in[0], in[1]
	if ch[0].Op() != nil || c.learnable[ch[0]] {
		return fmt.Errorf("%w: node %q updates %q, which is not a non-trainable weight (an input of the graph that is not learnable)", ErrUnsupported, n.Name(), ch[0].Name())
	}
	if role := c.p.Buffers[w].Role; role != Input {
		return fmt.Errorf("%w: node %q updates %q, whose buffer is a %v buffer (is it updated twice?)", ErrUnsupported, n.Name(), ch[0].Name(), role)
	}
	if c.p.Buffers[w].Elems != c.p.Buffers[stat].Elems {
		return fmt.Errorf("node %q: %q holds %d values, the statistic %q %d", n.Name(), ch[0].Name(), c.p.Buffers[w].Elems, ch[1].Name(), c.p.Buffers[stat].Elems)
	}
	c.p.Buffers[w].Role = State
	c.p.bufOf[n] = w
	c.p.Moving = append(c.p.Moving, Step{Kind: MovingAverage, Op: info, Name: n.Name(), Node: n, N: c.p.Buffers[w].Elems, In: []int{w, stat}, Out: []int{w}})
	return nil
}

// constant gives a constant node a Const buffer holding its value.
func (c *compiler) constant(n *gorgonia.Node) error {
	v := n.Value()
	if v == nil {
		return unsupported(n, "takes no operands but has no value")
	}
	var data []float32
	switch x := v.(type) {
	case *gorgonia.F32:
		data = []float32{float32(*x)}
	case *tensor.Dense:
		d, ok := x.Data().([]float32)
		if !ok {
			return fmt.Errorf("%w: node %q: a constant of dtype %v: gokeras machines compute in float32 only", ErrUnsupported, n.Name(), x.Dtype())
		}
		data = append([]float32(nil), d...)
	default:
		return fmt.Errorf("%w: node %q: a constant %T: gokeras machines compute in float32 only", ErrUnsupported, n.Name(), v)
	}
	b := c.alloc(n, Const)
	c.p.Buffers[b].Data = data
	c.p.Buffers[b].Elems = len(data)
	return nil
}

// matrix views a shape as rows × cols, all leading axes being rows, as
// package ops does.
func matrix(s tensor.Shape) (rows, cols int) {
	if len(s) == 0 {
		return 1, 1
	}
	rows = 1
	for _, d := range s[:len(s)-1] {
		rows *= d
	}
	return rows, s[len(s)-1]
}

// isAdd reports whether op is gorgonia's elementwise addition, which its
// differentiation inserts to sum the gradients a node gets along several
// paths (a weight's from its layer and from its regularizer). gorgonia
// does not export the op's type, so it is recognised by its type and its
// String ("+ <retSame>"); TestAddIsRecognised fails if an upgrade changes
// either.
func isAdd(op gorgonia.Op) bool {
	t := reflect.TypeOf(op)
	return t != nil && t.Name() == "elemBinOp" && t.PkgPath() == "gorgonia.org/gorgonia" && strings.HasPrefix(op.String(), "+ ")
}

// readTarget returns where a gorgonia.Read node stores the value it reads.
// gorgonia keeps that pointer in an unexported field of its readOp and
// hands it to its own machines only, so it is read here with reflection;
// TestReadTarget fails if a gorgonia upgrade changes that field.
func readTarget(op gorgonia.Op) (*gorgonia.Value, bool) {
	if op == nil {
		return nil, false
	}
	v := reflect.ValueOf(op)
	t := v.Type()
	if t.Name() != "readOp" || t.PkgPath() != "gorgonia.org/gorgonia" || t.Kind() != reflect.Struct || t.NumField() != 1 {
		return nil, false
	}
	f := v.Field(0)
	if f.Type() != reflect.TypeOf((*gorgonia.Value)(nil)) || f.IsNil() {
		return nil, false
	}
	return (*gorgonia.Value)(f.UnsafePointer()), true
}

// TrainingSteps returns the steps of one training step of u: the
// plan's steps with the update of every learnable placed once its gradient
// exists and no later step reads the weight, folded into the step that
// computes the gradient where the backend offers that (GradUpdate), else
// as an Update step after it; then the plan's updates of its State
// buffers (Plan.Moving). It fails, wrapping ErrNoGradients, for a plan
// without the gradient of every learnable.
func (p *Plan) TrainingSteps(u optim.Update) ([]Step, error) { return p.trainingSteps(u, false) }

// ReducedTrainingSteps returns the steps of one data-parallel training
// step of u: the plan's steps, every gradient whole in its buffer, then a
// Reduce step of all the gradients, then (for a global clipnorm) their
// GlobalNorm, then an Update step per learnable. Nothing is folded: the
// updates must see the reduced gradients. The updates of the State
// buffers follow, after a Reduce step of their statistics (movingSteps).
func (p *Plan) ReducedTrainingSteps(u optim.Update) ([]Step, error) { return p.trainingSteps(u, true) }

// Bucket sizes of the machines' OverlappedTrainingSteps, PyTorch DDP's:
// the first bucket is handed over from 1 MiB of gradients, so that the
// last layer's reduction starts early; the next ones from 25 MiB.
var (
	FirstBucketBytes = 1 << 20
	BucketBytes      = 25 << 20
)

// OverlappedTrainingSteps are ReducedTrainingSteps whose all-reduce
// overlaps the backward pass, as PyTorch DDP's buckets do: once the last
// step that writes or reads a gradient has run, the gradient joins the
// current bucket, and a bucket of at least first bytes (the first) or
// bucket bytes (the others) is handed to the reducer at once (a
// ReduceStart step) while the next steps run; the last bucket goes after
// the plan's steps, then a ReduceWait, the global norm and the updates.
// Each gradient is reduced whole, in one call of the reducer, as in
// ReducedTrainingSteps, so the results are the same bit for bit.
func (p *Plan) OverlappedTrainingSteps(u optim.Update, first, bucket int) ([]Step, error) {
	steps, err := p.trainingSteps(u, true)
	if err != nil {
		return nil, err
	}
	n := len(p.Steps)
	if len(steps) <= n || steps[n].Kind != Reduce {
		return nil, fmt.Errorf("plan: the reduced steps have no Reduce after the plan's %d steps", n)
	}
	done := make([][]int, n) // the learnables whose gradients are complete after each step
	for i, g := range p.Grads {
		at := -1
		for si := range p.Steps {
			s := &p.Steps[si]
			if slices.Contains(s.Out, g) || slices.Contains(s.In, g) || (s.Of != nil && slices.Contains(s.Of.In, g)) {
				at = si
			}
		}
		if at < 0 {
			return nil, fmt.Errorf("no step computes the gradient of %q", p.Learnables[i].Name())
		}
		done[at] = append(done[at], i)
	}
	out := make([]Step, 0, len(steps)+len(p.Learnables)+1)
	var pending []int
	bytes, limit := 0, first
	flush := func() {
		if len(pending) > 0 {
			out = append(out, Step{Kind: ReduceStart, Name: p.Learnables[0].Name(), Node: p.Learnables[0], In: pending})
		}
		pending, bytes, limit = nil, 0, bucket
	}
	for si := range p.Steps {
		out = append(out, p.Steps[si])
		for _, i := range done[si] {
			pending = append(pending, p.Grads[i])
			bytes += 4 * p.Buffers[p.Grads[i]].Elems
		}
		if bytes >= limit {
			flush()
		}
	}
	flush()
	out = append(out, Step{Kind: ReduceWait, Name: p.Learnables[0].Name(), Node: p.Learnables[0], In: slices.Clone(p.Grads)})
	return append(out, steps[n+1:]...), nil
}

func (p *Plan) trainingSteps(u optim.Update, reduce bool) ([]Step, error) {
	if len(p.Learnables) == 0 {
		return nil, fmt.Errorf("%w: the graph has no learnables", ErrNoGradients)
	}
	reads := func(s *Step, b int) bool {
		for _, in := range s.In {
			if in == b {
				return true
			}
		}
		return s.Of != nil && slices.Contains(s.Of.In, b)
	}
	type placement struct {
		learnable int
		fused     bool
	}
	after := make([][]placement, len(p.Steps))
	skip := make([]bool, len(p.Steps))
	for i, l := range p.Learnables {
		g := p.Grads[i]
		if g == None {
			return nil, fmt.Errorf("%w: the graph computes no gradient for %q", ErrNoGradients, l.Name())
		}
		w, ok := p.BufferOf(l)
		if !ok {
			return nil, fmt.Errorf("learnable %q has no buffer", l.Name())
		}
		gradStep, gradRead, at := -1, false, -1
		for si := range p.Steps {
			s := &p.Steps[si]
			if slices.Contains(s.Out, g) {
				gradStep = si
			}
			if reads(s, g) {
				gradRead = true
			}
			if reads(s, w) {
				at = max(at, si)
			}
		}
		if gradStep < 0 {
			return nil, fmt.Errorf("no step computes the gradient of %q", l.Name())
		}
		at = max(at, gradStep)
		fused := !gradRead && !u.NeedsWholeGradient() && p.caps.FusedUpdate != nil && p.caps.FusedUpdate(&p.Steps[gradStep], u)
		if fused {
			skip[gradStep] = true
		}
		after[at] = append(after[at], placement{learnable: i, fused: fused})
	}
	if u.GlobalClipNorm > 0 || reduce {
		// Every gradient first, then their reduction, their joint norm,
		// and the updates.
		steps := append(make([]Step, 0, len(p.Steps)+len(p.Learnables)+2), p.Steps...)
		if reduce {
			steps = append(steps, Step{Kind: Reduce, Name: p.Learnables[0].Name(), Node: p.Learnables[0], In: slices.Clone(p.Grads)})
		}
		if u.GlobalClipNorm > 0 {
			steps = append(steps, Step{Kind: GlobalNorm, Name: p.Learnables[0].Name(), Node: p.Learnables[0], ClipNorm: u.GlobalClipNorm, In: slices.Clone(p.Grads), Out: []int{p.Scale}})
		}
		for i, l := range p.Learnables {
			w, _ := p.BufferOf(l)
			in := []int{w, p.Grads[i]}
			if u.GlobalClipNorm > 0 {
				in = append(in, p.Scale)
			}
			steps = append(steps, Step{Kind: Update, Name: l.Name(), Node: l, Learnable: i, In: in})
		}
		return append(steps, p.movingSteps(reduce)...), nil
	}
	steps := make([]Step, 0, len(p.Steps)+len(p.Learnables))
	for si := range p.Steps {
		if !skip[si] {
			steps = append(steps, p.Steps[si])
		}
		for _, pl := range after[si] {
			l := p.Learnables[pl.learnable]
			w, _ := p.BufferOf(l)
			if !pl.fused {
				steps = append(steps, Step{Kind: Update, Name: l.Name(), Node: l, Learnable: pl.learnable, In: []int{w, p.Grads[pl.learnable]}})
				continue
			}
			var of *Step
			for gi := range p.Steps {
				if slices.Contains(p.Steps[gi].Out, p.Grads[pl.learnable]) {
					of = &p.Steps[gi]
				}
			}
			steps = append(steps, Step{Kind: GradUpdate, Name: l.Name(), Node: l, Learnable: pl.learnable, In: []int{w}, Of: of})
		}
	}
	return append(steps, p.movingSteps(false)...), nil
}

// movingSteps are the plan's MovingAverage steps (Plan.Moving), which
// run after every step that reads the batch's statistics, the backward
// pass included. In a data-parallel step (reduce) a Reduce step of the
// statistics comes first: the machine all-reduces them as it does the
// gradients, each replica's scaled by its share of the global batch and
// summed, so that every replica updates with the same mean of the
// replicas' statistics. The update, m·moving + (1-m)·stat·bessel, is
// linear in the statistic, and every replica's moving value is the same
// before it; so with shards of equal size (a share of 1/replicas each)
// updating with the mean of the statistics gives the mean over the
// replicas of the moving values each replica's own update would give,
// up to float32 rounding: what Keras' replicas read for a variable
// synchronized on read with MEAN aggregation.
func (p *Plan) movingSteps(reduce bool) []Step {
	if len(p.Moving) == 0 {
		return nil
	}
	steps := make([]Step, 0, len(p.Moving)+1)
	if reduce {
		var stats []int
		for _, s := range p.Moving {
			if !slices.Contains(stats, s.In[1]) {
				stats = append(stats, s.In[1])
			}
		}
		first := p.Moving[0]
		steps = append(steps, Step{Kind: Reduce, Name: first.Name, Node: first.Node, In: stats})
	}
	return append(steps, p.Moving...)
}

// ErrNoGradients is wrapped by TrainingSteps' error for a graph that cannot
// train: it has no learnables, or lacks the gradient of one.
var ErrNoGradients = errors.New("the graph computes no gradients to train with")
