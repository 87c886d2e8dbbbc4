// kernel_list.h — the kernels of kernels.cu that LaunchKernel knows by
// name, for both launchers: emu.cc's and the race copy's
// (internal/race/kernels.cc, which includes this file through a link).
// EMU_KERNELS(K) expands K(name) for each.
#pragma once

#define EMU_KERNELS(K)                                                                                                 \
	K(gk_bias_act)                                                                                                     \
	K(gk_softmax_rows)                                                                                                 \
	K(gk_act_grad)                                                                                                     \
	K(gk_softmax_grad_rows)                                                                                            \
	K(gk_sum_rows)                                                                                                     \
	K(gk_zero_one_labels)                                                                                              \
	K(gk_loss)                                                                                                         \
	K(gk_loss_grad)                                                                                                    \
	K(gk_sgd)                                                                                                          \
	K(gk_momentum)                                                                                                     \
	K(gk_adam)                                                                                                         \
	K(gk_rmsprop)                                                                                                      \
	K(gk_adagrad)                                                                                                      \
	K(gk_adadelta)                                                                                                     \
	K(gk_adamax)                                                                                                       \
	K(gk_nadam)                                                                                                        \
	K(gk_abs_sq_sums)                                                                                                  \
	K(gk_clip_scale)                                                                                                   \
	K(gk_global_scale)                                                                                                 \
	K(gk_penalty)                                                                                                      \
	K(gk_penalty_grad)                                                                                                 \
	K(gk_add)                                                                                                          \
	K(gk_u8_to_f32)                                                                                                    \
	K(gk_patches)                                                                                                      \
	K(gk_patches_grad)                                                                                                 \
	K(gk_pool)                                                                                                         \
	K(gk_pool_grad)                                                                                                    \
	K(gk_dropout)                                                                                                      \
	K(gk_norm_col_sums)                                                                                                \
	K(gk_norm_col_finish)                                                                                              \
	K(gk_batch_norm)                                                                                                   \
	K(gk_batch_norm_grad)                                                                                              \
	K(gk_layer_norm)                                                                                                   \
	K(gk_gather)                                                                                                       \
	K(gk_scatter_add)                                                                                                  \
	K(gk_metric_sum)                                                                                                   \
	K(gk_metric_pr)                                                                                                    \
	K(gk_metric_auc)                                                                                                   \
	K(gk_metric_f1)                                                                                                    \
	K(gk_scale)
