//===- TensorData.h - ONNX tensors and types as MLIR ------------*- C++ -*-===//
//
// Maps ONNX element types to MLIR types and turns a TensorProto (inline
// fields, raw bytes, or external data beside the model) into an elements
// attribute. Large tensors become dense resources whose blob takes over the
// protobuf's byte string, so a weight is held once and never copied again.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_FRONTENDS_ONNX_TENSORDATA_H
#define KILN_FRONTENDS_ONNX_TENSORDATA_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Error.h"

#include <string>

namespace onnx {
class TensorProto;
} // namespace onnx

namespace kiln::onnx_frontend {

/// TensorProto.DataType values newer than some onnx.proto Kiln may be built
/// with (ONNX 1.14-1.23): the storage-only element types.
enum NewDataType : int {
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUint4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUint2 = 25,
  kInt2 = 26,
};

/// The MLIR element type of ONNX data type `dataType` (TensorProto's enum),
/// or a null type when kiln does not support it.
mlir::Type elementTypeOf(mlir::MLIRContext *context, int dataType);

/// The ONNX name of a data type ("float", "int64", ...), for messages.
llvm::StringRef dataTypeName(int dataType);

/// The ONNX data type of an MLIR element type, or 0 (UNDEFINED).
int dataTypeOf(mlir::Type elementType);

/// Converts `tensor` to an elements attribute. `modelDirectory` anchors
/// external data locations (empty: the model came as bytes and external
/// data is an error).
/// With `preferResource` a tensor that is not tiny
/// becomes a `dense_resource` named after the tensor. May take the bytes
/// out of `tensor` (it is left without data).
llvm::Expected<mlir::ElementsAttr>
tensorToAttr(mlir::MLIRContext *context, onnx::TensorProto &tensor,
             llvm::StringRef modelDirectory, bool preferResource);

/// Reads a TensorProto serialised in a file (ONNX's test data .pb files).
llvm::Expected<mlir::ElementsAttr> readTensorFile(mlir::MLIRContext *context,
                                                  llvm::StringRef path);

/// The same for a TensorProto's bytes in memory (`name` stands for them in
/// messages; `directory` as for tensorToAttr).
llvm::Expected<mlir::ElementsAttr> parseTensorProto(mlir::MLIRContext *context,
                                                    llvm::StringRef bytes, llvm::StringRef name,
                                                    llvm::StringRef directory);

} // namespace kiln::onnx_frontend

#endif // KILN_FRONTENDS_ONNX_TENSORDATA_H
