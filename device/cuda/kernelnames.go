package cuda

// Kernel names: the extern "C" __global__ functions of kernels/kernels.cu.
// This file has no build tag so that TestPTXUpToDate, which runs in every
// build, can check the committed PTX defines each of them.
const (
	kBiasAct     = "gk_bias_act"
	kSoftmax     = "gk_softmax_rows"
	kActGrad     = "gk_act_grad"
	kSoftmaxGrad = "gk_softmax_grad_rows"
	kSumRows     = "gk_sum_rows"
	kLoss        = "gk_loss"
	kLossGrad    = "gk_loss_grad"
	kZeroOne     = "gk_zero_one_labels"
	kSGD         = "gk_sgd"
	kMomentum    = "gk_momentum"
	kAdam        = "gk_adam"
	kU8ToF32     = "gk_u8_to_f32"
	kPatches     = "gk_patches"
	kPatchesGrad = "gk_patches_grad"
	kPool        = "gk_pool"
	kPoolGrad    = "gk_pool_grad"
	kDropout     = "gk_dropout"
	kNormSums    = "gk_norm_col_sums"
	kNormFinish  = "gk_norm_col_finish"
	kBatchNorm   = "gk_batch_norm"
	kBatchNormDx = "gk_batch_norm_grad"
	kLayerNorm   = "gk_layer_norm"
	kGather      = "gk_gather"
	kScatterAdd  = "gk_scatter_add"
	kRMSprop     = "gk_rmsprop"
	kAdagrad     = "gk_adagrad"
	kAdadelta    = "gk_adadelta"
	kAdamax      = "gk_adamax"
	kNadam       = "gk_nadam"
	kAbsSqSums   = "gk_abs_sq_sums"
	kClipScale   = "gk_clip_scale"
	kGlobalScale = "gk_global_scale"
	kPenalty     = "gk_penalty"
	kPenaltyGrad = "gk_penalty_grad"
	kAdd         = "gk_add"
	kScale       = "gk_scale"
	kMetricSum   = "gk_metric_sum"
	kMetricPR    = "gk_metric_pr"
	kMetricAUC   = "gk_metric_auc"
	kMetricF1    = "gk_metric_f1"
)

// kernelNames are the kernels the machine loads from the PTX.
var kernelNames = []string{
	kBiasAct, kSoftmax, kActGrad, kSoftmaxGrad, kSumRows, kLoss, kLossGrad, kSGD, kMomentum, kAdam, kU8ToF32,
	kPatches, kPatchesGrad, kPool, kPoolGrad, kDropout,
	kNormSums, kNormFinish, kBatchNorm, kBatchNormDx, kLayerNorm, kGather, kScatterAdd,
	kRMSprop, kAdagrad, kAdadelta, kAdamax, kNadam, kAbsSqSums, kClipScale, kPenalty, kPenaltyGrad, kAdd,
	kZeroOne, kGlobalScale, kMetricSum, kMetricPR, kMetricAUC, kMetricF1, kScale,
}
