//===- NodeContext.h - what an op importer sees of one node -----*- C++ -*-===//
//
// The interface between the importer driver and the per-family op
// importers. An importer reads inputs and attributes (with ONNX's defaults),
// builds kiln ops with `make<Op>(...)`, and binds outputs. Errors are
// recorded, not thrown: after the first one `make` returns null and the
// rest of the importer runs through harmlessly, so importers read as
// straight-line code and end with `return ctx.setOutput(...)`.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_NODECONTEXT_H
#define KILN_FRONTENDS_ONNX_NODECONTEXT_H

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringSet.h"

#include "frontends/onnx/SymbolicShapes.h"

#include <optional>
#include <string>

namespace onnx {
class NodeProto;
class AttributeProto;
class GraphProto;
class TensorProto;
} // namespace onnx

namespace kiln::onnx_frontend {

class ImporterState;

/// An ONNX sequence whose length is known when compiling: its tensors in
/// order, and the element type every one has (an empty sequence still has
/// one).
struct Sequence {
  llvm::SmallVector<mlir::Value> elements;
  mlir::Type elementType;
};

/// Why a node could not be imported.
enum class IssueKind {
  Unsupported,   ///< a valid model that Kiln cannot import (yet)
  NeedsConstant, ///< an input must be known at compile time but is not
  Invalid,       ///< the model is wrong (types, attributes, arity)
  Internal,      ///< Kiln failed without a reason of the model's: a bug or
                 ///< a limitation it did not name
};

/// What the diagnostics below return: a failure that converts to
/// LogicalResult, and that may be ignored where a helper records an error
/// and returns a null value instead.
struct RecordedFailure {
  operator llvm::LogicalResult() const { return llvm::failure(); }
};

class NodeContext {
public:
  NodeContext(ImporterState &state, const onnx::NodeProto &node,
              std::string description, int64_t opset);

  const onnx::NodeProto &node;
  const int64_t opset;
  mlir::OpBuilder &b;
  const mlir::Location loc;

  llvm::StringRef opType() const;
  mlir::MLIRContext *context() const { return b.getContext(); }
  /// Whether the model is imported for a training step (ImportOptions).
  bool training() const;
  bool failed() const { return hasFailed; }

  //===--- inputs ---------------------------------------------------------===//
  size_t numInputs() const;
  /// True when input `i` is present (optional inputs may be "" or absent).
  bool hasInput(size_t i) const;
  /// Input `i`; records an error and returns null when it is missing.
  mlir::Value input(size_t i);
  /// Input `i`, or null when it is absent (no error).
  mlir::Value optionalInput(size_t i);
  /// The ranked tensor type of a value (null for a null value).
  static mlir::RankedTensorType typeOf(mlir::Value v);
  static int64_t rankOf(mlir::Value v);
  static mlir::Type elementTypeOf(mlir::Value v);

  //===--- compile-time constants -----------------------------------------===//
  /// The value of `v` when it is a dense kiln.constant, else null.
  static mlir::DenseElementsAttr constantOf(mlir::Value v);
  /// Integer contents of input `i`, which must be constant; records a
  /// NeedsConstant issue naming `what` otherwise.
  std::optional<llvm::SmallVector<int64_t>> intsInput(size_t i,
                                                      llvm::StringRef what);
  /// Whether input `i` is absent or known when compiling (a constant, or
  /// a tensor without elements): intsInput can read it. Otherwise an
  /// importer that can reads it at run time (ops/Helpers.h).
  bool isKnownInput(size_t i);
  /// Whether input `i` is a shape computed at run time (SymbolicShapes.h):
  /// it has no kiln value, only symbolicInput reads it.
  bool isSymbolic(size_t i) const;
  /// Input `i` as shape arithmetic: a symbolic shape computation, or a
  /// constant integer tensor of rank 0 or 1 (else a NeedsConstant issue).
  std::optional<SymbolicInts> symbolicInput(size_t i, llvm::StringRef what);
  /// The kiln value imported for the ONNX name `name` so far, or null (an
  /// op whose attributes name values: Gradient's xs and y).
  mlir::Value valueNamed(llvm::StringRef name) const;
  /// Whether input `i` names an optional without a value (ops/Sequence.cpp).
  bool isEmptyOptional(size_t i) const;
  /// Whether input `i` names a sequence (ops/Sequence.cpp).
  bool isSequence(size_t i) const;
  /// Input i is a string tensor (its value holds string handles).
  bool isString(size_t i) const;
  /// Input `i` as a sequence; records an error and returns nullopt when it
  /// is missing or a tensor.
  std::optional<Sequence> sequenceInput(size_t i);
  /// Float contents of input `i` (any numeric type), which must be constant.
  std::optional<llvm::SmallVector<double>> floatsInput(size_t i,
                                                       llvm::StringRef what);

  //===--- attributes -----------------------------------------------------===//
  const onnx::AttributeProto *attr(llvm::StringRef name) const;
  bool hasAttr(llvm::StringRef name) const { return attr(name) != nullptr; }
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue) const;
  float floatAttr(llvm::StringRef name, float defaultValue) const;
  std::string stringAttr(llvm::StringRef name,
                         llvm::StringRef defaultValue) const;
  llvm::SmallVector<int64_t> intsAttr(llvm::StringRef name) const;
  llvm::SmallVector<float> floatsAttr(llvm::StringRef name) const;
  /// A tensor-valued attribute as a dense attribute (null when absent).
  mlir::DenseElementsAttr tensorAttr(llvm::StringRef name);
  /// Marks attributes read that have no effect on what Kiln computes
  /// (Dropout's seed, TopK's sorted = 0): each call site says why.
  void attrsWithoutEffect(std::initializer_list<llvm::StringRef> names);
  /// The same for input `i` (Resize's roi outside tf_crop_and_resize).
  void inputWithoutEffect(size_t i) { inputsRead.insert(i); }
  /// The node's attributes that no accessor above looked up: after a
  /// successful import, attributes the importer never read (GraphImporter
  /// refuses them rather than compile as if they were absent).
  llvm::SmallVector<std::string> unreadAttributes() const;
  /// The node's inputs (given, not "") that no accessor of inputs looked
  /// at: beyond the op's inputs, or an optional one the importer ignores.
  llvm::SmallVector<size_t> unreadInputs() const;

  //===--- subgraphs ------------------------------------------------------===//
  /// The graph attribute `name` (a control-flow op's body), or null.
  const onnx::GraphProto *graphAttr(llvm::StringRef name) const;
  /// Imports `body` once, inline: its inputs bound to `inputs`, its
  /// initializers as constants, its nodes imported as the graph's are
  /// (they see the enclosing graph's values); its outputs' values are
  /// appended to `outputs`. A body node's failure is recorded under that
  /// node and fails this one.
  llvm::LogicalResult importSubgraph(const onnx::GraphProto &body, mlir::ValueRange inputs,
                                     llvm::SmallVectorImpl<mlir::Value> &outputs);

  //===--- outputs --------------------------------------------------------===//
  size_t numOutputs() const;
  bool hasOutput(size_t i) const;
  /// Whether output `i` is read: by a node of the graph or as a graph
  /// output.
  bool outputUsed(size_t i) const;
  /// Binds output `i` (ignored when the node does not name it). Fails when
  /// the node has failed or `value` is null.
  llvm::LogicalResult setOutput(size_t i, mlir::Value value);
  /// Binds output `i` to shape arithmetic: a constant when every element
  /// is known, else a symbolic value only shape-taking ops may read.
  llvm::LogicalResult setSymbolicOutput(size_t i, const SymbolicInts &value);
  /// Binds output `i` to an optional without a value.
  llvm::LogicalResult setEmptyOptionalOutput(size_t i);
  /// Binds output `i` to a sequence.
  llvm::LogicalResult setSequenceOutput(size_t i, Sequence value);
  /// Output i is the string tensor `value` (i64 handles).
  llvm::LogicalResult setStringOutput(size_t i, mlir::Value value);
  /// Marks `value` a string tensor (i64 handles); gives it back.
  mlir::Value asString(mlir::Value value);
  /// setOutput for all but the last output of a node; a failure is
  /// recorded and comes back from finish() or the last setOutput.
  void bindOutput(size_t i, mlir::Value value) { (void)setOutput(i, value); }
  /// Fails if the node names output `i`: for optional outputs Kiln does not
  /// produce (e.g. MaxPool's Indices).
  llvm::LogicalResult rejectOutput(size_t i, llvm::StringRef what);
  /// The node's result: success unless an error was recorded.
  llvm::LogicalResult finish() const;

  //===--- diagnostics ----------------------------------------------------===//
  RecordedFailure unsupported(const llvm::Twine &why);
  RecordedFailure invalid(const llvm::Twine &why);
  /// A failure inside Kiln, never blamed on the model.
  RecordedFailure internal(const llvm::Twine &why);
  RecordedFailure needsConstant(size_t input, llvm::StringRef what);
  /// `axis` in [-rank, rank) made non-negative; records an error otherwise.
  std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                       llvm::StringRef what = "axis");

  //===--- building -------------------------------------------------------===//
  /// Builds `OpTy` with inferred result types, verifies it and folds it.
  /// Returns null (recording why) when an operand is null, inference or
  /// verification fails. Arguments follow the op's generic builder after
  /// the result types: operands, then attributes.
  template <typename OpTy, typename... Args>
  mlir::Value make(Args &&...args) {
    auto values = makeMulti<OpTy>(1, std::forward<Args>(args)...);
    return values.empty() ? mlir::Value() : values.front();
  }
  /// As make, for ops with `numResults` results.
  template <typename OpTy, typename... Args>
  llvm::SmallVector<mlir::Value> makeMulti(unsigned numResults,
                                           Args &&...args) {
    if (hasFailed || anyNull(args...))
      return {};
    llvm::SmallVector<mlir::Type> placeholders(numResults, placeholderType());
    mlir::Operation *op = OpTy::create(b, loc, mlir::TypeRange(placeholders),
                                       std::forward<Args>(args)...);
    return finishOp(op);
  }
  /// As make, for kiln.cast (whose result type is given, not inferred).
  mlir::Value cast(mlir::Value v, mlir::Type elementType, bool saturate = false);
  /// As cast, for kiln.bitcast (the same bits read as `elementType`).
  mlir::Value bitcast(mlir::Value v, mlir::Type elementType);

  /// A constant of `attr`'s value.
  mlir::Value constant(mlir::ElementsAttr attr);
  /// A rank-0 constant of element type `type` holding `value`.
  mlir::Value scalar(mlir::Type type, double value);
  /// A rank-0 constant of `like`'s element type.
  mlir::Value scalarLike(mlir::Value like, double value);
  /// A 1-D i64 constant.
  mlir::Value indices(llvm::ArrayRef<int64_t> values);

  // Short forms of frequent attributes.
  mlir::DenseI64ArrayAttr i64s(llvm::ArrayRef<int64_t> v) {
    return b.getDenseI64ArrayAttr(v);
  }
  mlir::IntegerAttr i64(int64_t v) { return b.getI64IntegerAttr(v); }

private:
  mlir::Type placeholderType() const;
  mlir::SmallVector<mlir::Value> finishOp(mlir::Operation *op);
  template <typename... Args> static bool anyNull(const Args &...args) {
    return (isNull(args) || ...);
  }
  static bool isNull(mlir::Value v) { return !v; }
  static bool isNull(mlir::ValueRange vs) {
    return llvm::any_of(vs, [](mlir::Value v) { return !v; });
  }
  template <typename T> static bool isNull(const T &) { return false; }
  RecordedFailure record(IssueKind kind, const llvm::Twine &message);

  ImporterState &state;
  std::string description;
  bool hasFailed = false;
  /// Names looked up through attr(), present or not.
  mutable llvm::StringSet<> attributesRead;
  /// Input positions looked at through hasInput (which every input
  /// accessor calls) or symbolicInput.
  mutable llvm::SmallSet<size_t, 8> inputsRead;
};

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_NODECONTEXT_H
