//===- TrainingStep.h - a model's training step as kiln IR ------*- C++ -*-===//
//
// `kiln compile --train`: the imported model's `main` becomes one training
// step: forward, loss, backward (kiln-differentiate) and the optimiser's
// update, returning the loss and the updated parameters and optimiser
// state, which the session owns between steps (kiln_model_state).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_AUTODIFF_TRAININGSTEP_H
#define KILN_COMPILER_AUTODIFF_TRAININGSTEP_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace kiln::autodiff {

struct TrainOptions {
  /// "cross-entropy" (output 0 as logits, or a softmax / log_softmax's
  /// input; the target is the class index, int64 [N]) or "mse" (the
  /// target has output 0's shape).
  std::string loss = "cross-entropy";
  /// "sgd" or "adam", with PyTorch's semantics (weight decay added to the
  /// gradient; SGD's momentum buffer starts at zero, which is PyTorch's
  /// first step for dampening 0).
  std::string optimizer = "sgd";
  double lr = 0.01, momentum = 0.0, weightDecay = 0.0;
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  /// Update every N-th step with the mean of the N steps' gradients (the
  /// others only accumulate); 1: every step.
  int64_t gradAccum = 1;
  /// Scale the gradients so that their global L2 norm is at most this
  /// (0: off), as torch.nn.utils.clip_grad_norm_.
  double clipGradNorm = 0.0;
  /// The float initializers (rank >= 1) whose names match become
  /// parameters.
  std::string trainable = ".*";
  /// Dim 0 of every input when the model's is dynamic (0: it must be
  /// static).
  int64_t batch = 0;
  /// Batch normalisation trains on the batch's statistics and updates its
  /// running mean and variance as running = (1 - m) running + m batch
  /// (the unbiased variance), PyTorch's convention (ONNX's momentum is
  /// 1 - m).
  double batchNormMomentum = 0.1;
  /// Recompute cheap elementwise forward values in the backward pass
  /// instead of saving them (kiln-rematerialize, which the driver runs
  /// before fusion).
  bool remat = false;
  /// Dropout k (in the model's order) draws its mask with seed
  /// dropoutSeed + k and the step counter.
  int64_t dropoutSeed = 0;
};

/// Parses `sgd(lr=0.1,momentum=0.9)` / `adam(lr=1e-3,beta1=..,...)` into
/// `options`.
llvm::Error parseOptimizer(llvm::StringRef spec, TrainOptions &options);

/// A tensor the session owns: function argument `input`, updated by result
/// `output`, starting from `initial`.
struct StepState {
  static constexpr unsigned readOnly = ~0u; ///< KILN_STATE_READ_ONLY
  unsigned input = 0, output = 0;
  std::string name;
  std::vector<char> initial;
};

/// Rewrites `main` into the training step (arguments: the model's inputs,
/// `target`, then the parameters and optimiser state; results: `loss`,
/// then their updates) and says which arguments the session owns.
llvm::Expected<std::vector<StepState>> buildTrainingStep(mlir::ModuleOp module,
                                                         const TrainOptions &options);

/// Rewrites `main` (the model as imported) into the training step's
/// inference entry: the same parameters and batch-norm running statistics
/// as buildTrainingStep lifts, by the same names, as read-only session-
/// owned arguments after the model's inputs; the model's results.
llvm::Expected<std::vector<StepState>> buildInferenceEntry(mlir::ModuleOp module,
                                                           const TrainOptions &options);

} // namespace kiln::autodiff

#endif // KILN_COMPILER_AUTODIFF_TRAININGSTEP_H
