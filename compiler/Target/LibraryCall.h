//===- LibraryCall.h - an op a backend hands to a vendor library -*- C++ -*-===//
//
// A backend claims convolutions, matmuls and their fused epilogues for a
// vendor library (oneDNN on CPU; cuDNN / cuBLASLt on CUDA) between the
// `fuse` and `linalg` phases. Each claimed op is described here in
// target-neutral terms: what it computes (a kind and its parameters) and
// the dims of its operands. The shared descriptor writer
// (in the backends' common folder) turns the table into the artifact's
// `kiln_library_call` records; the runtime's device prepares each one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_TARGET_LIBRARYCALL_H
#define KILN_COMPILER_TARGET_LIBRARYCALL_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

/// What a library call computes.
enum class LibraryKind {
  /// output = conv(input [N,C,H,W], weight [O,C/g,KH,KW]); parameters
  /// `strides`, `dilations` (rank - 2 each), `pads` (all low, then all
  /// high), `groups` (one value), and optionally `layouts`: the physical
  /// layout of the input's and the output's buffers (LibraryLayout; the
  /// dims stay [N,C,H,W] either way), and optionally
  /// `output_batch_stride`: elements between batch items of the output,
  /// which is then channels of a larger channels-first buffer (a
  /// concatenation's: `kiln.output_into`); absent, the output is dense.
  Convolution,
  /// output [..,M,N] = lhs [..,M,K] x rhs [..,K,N]; lower-rank operands
  /// broadcast from the front. No parameters.
  Matmul,
  /// output [N,C,OH,OW] = pool(input [N,C,H,W]), no weight; parameters
  /// `algorithm` (LibraryPooling, one value), `kernel`, `strides` (rank -
  /// 2 each), `pads` (all low, then all high) and optionally `layouts` as
  /// for a convolution.
  Pool,
  /// output [N,C,H,W] = the inputs [N,Ci,H,W] joined along `axis` (one
  /// value; 1, the channels): `input`, then `moreInputs`, no weight;
  /// parameters `axis` and optionally `layouts`, one per input, then
  /// the output's.
  Concat,
  /// output [N,C,H,W] = input [N,C,H,W] * weight [N or 1,C,1,1], the
  /// weight broadcast over H and W (a squeeze-excitation's channel
  /// scale; the weight is an activation, never a constant of the
  /// artifact); parameters optionally `layouts` as for a convolution (the
  /// weight's [N,C,1,1] is the same bytes in either).
  Scale,
};

/// What a Pool call computes over each window.
enum class LibraryPooling : int64_t {
  Max = 0,
  /// The mean, padded positions counted.
  AverageIncludePad = 1,
  /// The mean over the window's real positions.
  AverageExcludePad = 2,
};

/// How a library call's activation buffer is laid out in memory.
enum class LibraryLayout : int64_t {
  /// Row-major in the logical dims: NCHW for a convolution.
  ChannelsFirst = 0,
  /// NHWC: only library calls read or write such a buffer.
  ChannelsLast = 1,
};

/// The activation that ends a call's fused epilogue.
/// (Silu: x * sigmoid(x); HardSigmoid: clip(alpha * x + beta, 0, 1);
/// HardSwish: x * HardSigmoid(x) with alpha 1/6, beta 1/2.)
enum class LibraryActivation {
  None,
  Relu,
  Clip,
  Sigmoid,
  Tanh,
  GeluErf,
  GeluTanh,
  Silu,
  HardSigmoid,
  HardSwish
};

/// output = activation(op(input, weight) + bias + residual).
struct LibraryEpilogue {
  /// One value per output channel (dim 1 of a convolution's output, the
  /// last dim of a matmul's), passed with `biasRank` dims.
  bool bias = false;
  int64_t biasRank = 0;
  /// The output buffer holds the residual when the call starts.
  bool residual = false;
  LibraryActivation activation = LibraryActivation::None;
  /// The activation's parameters (clip: its bounds; hard sigmoid and
  /// HardSwish: alpha and beta).
  float alpha = 0, beta = 0;
};

struct LibraryCall {
  LibraryKind kind = LibraryKind::Convolution;
  /// Dims of the input, the weight and the output; -1 for a dynamic dim.
  std::vector<int64_t> input, weight, output;
  /// A concat's inputs after the first.
  std::vector<std::vector<int64_t>> moreInputs;
  /// The kind's named parameters (see LibraryKind), in a fixed order.
  std::vector<std::pair<std::string, std::vector<int64_t>>> params;
  LibraryEpilogue epilogue;
  /// The symbol of the weight operand's data when it is a constant of the
  /// artifact (set by the backend's code generation); the runtime then
  /// prepares it once, when a session is created. Empty otherwise.
  std::string weightsSymbol;
  /// When the backend stored those weights prepacked for its library: how
  /// they are laid out (opaque bytes the device reads back). Empty: plain.
  std::string weightsLayout;
  /// Why the device reorders an operand into and out of its library's
  /// layout ("input NCHW: from kiln.max_pool"), for reports; empty when
  /// nothing is reordered.
  std::string layoutNote;

  /// Parameter `name`, or an empty list.
  std::vector<int64_t> param(llvm::StringRef name) const {
    for (const auto &[key, values] : params)
      if (key == name)
        return values;
    return {};
  }
  /// The operands' dims in the order the code passes them (then the
  /// epilogue's bias): the inputs, the weight (a pool or concat has
  /// none), the output.
  std::vector<const std::vector<int64_t> *> operands() const;
  /// "conv+bias+relu": the kind and its epilogue, for reports.
  std::string summary() const;
};

} // namespace kiln

#endif // KILN_COMPILER_TARGET_LIBRARYCALL_H
