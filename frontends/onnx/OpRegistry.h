//===- OpRegistry.h - the table of ONNX op importers ------------*- C++ -*-===//
//
// Every supported ONNX op is a row: (domain, op type, opset range) -> the
// function that imports it. Each family file in ops/ adds its rows from a
// register<Family>Ops() function; the importer looks rows up by the opset
// the model imports for the node's domain.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_OPREGISTRY_H
#define KILN_FRONTENDS_ONNX_OPREGISTRY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kiln::onnx_frontend {

class NodeContext;

/// Imports one node: builds kiln ops and binds the node's outputs.
using NodeImportFn = llvm::LogicalResult (*)(NodeContext &);

/// Open upper bound of an opset range: the op has not changed since.
constexpr int64_t kAnyLaterOpset = std::numeric_limits<int64_t>::max();

struct OpImporter {
  std::string domain; ///< "" for the default ONNX domain
  std::string opType;
  int64_t minOpset;
  int64_t maxOpset; ///< inclusive
  NodeImportFn import;
};

class OpRegistry {
public:
  /// The registry with every family registered.
  static const OpRegistry &get();

  void add(llvm::StringRef opType, int64_t minOpset, int64_t maxOpset,
           NodeImportFn fn, llvm::StringRef domain = "");
  /// The row for `opType` in `domain` at `opset`, or null.
  const OpImporter *lookup(llvm::StringRef domain, llvm::StringRef opType,
                           int64_t opset) const;
  /// True when any opset of `opType` is supported (for messages).
  bool knowsOp(llvm::StringRef domain, llvm::StringRef opType) const;
  /// Supported opset ranges of `opType`, e.g. "7-12, 13+".
  std::string describeRanges(llvm::StringRef domain,
                             llvm::StringRef opType) const;
  /// Every op type with at least one row, sorted.
  std::vector<std::string> opTypes(llvm::StringRef domain = "") const;

private:
  std::vector<OpImporter> rows;
};

// One per family file in ops/.
void registerElementwiseOps(OpRegistry &);
void registerActivationOps(OpRegistry &);
void registerMathOps(OpRegistry &);
void registerNNOps(OpRegistry &);
void registerNormalizationOps(OpRegistry &);
void registerReductionOps(OpRegistry &);
void registerShapeOps(OpRegistry &);
void registerIndexingOps(OpRegistry &);
void registerGeneratorOps(OpRegistry &);
void registerGatherScatterOps(OpRegistry &);
void registerSortOps(OpRegistry &);
void registerLinearAlgebraOps(OpRegistry &);
void registerLossOps(OpRegistry &);
void registerResizeOps(OpRegistry &);
void registerRecurrentOps(OpRegistry &);
void registerQuantizationOps(OpRegistry &);
void registerAttentionOps(OpRegistry &);
void registerPadOps(OpRegistry &);
void registerGridSampleOps(OpRegistry &);
void registerSpectralOps(OpRegistry &);
void registerDetectionOps(OpRegistry &);
void registerControlFlowOps(OpRegistry &);
void registerSequenceOps(OpRegistry &);
void registerOptimizerOps(OpRegistry &);
void registerTextOps(OpRegistry &);
void registerStringOps(OpRegistry &);
void registerMlOps(OpRegistry &);
void registerTreeOps(OpRegistry &);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_OPREGISTRY_H
