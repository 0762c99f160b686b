//===- TensorData.cpp - ONNX tensors and types as MLIR --------------------===//

#include "frontends/onnx/TensorData.h"
#include "frontends/onnx/PackedBits.h"

#include "onnx/onnx.pb.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cstring>

using namespace mlir;
using llvm::Expected;

namespace kiln::onnx_frontend {

/// Tensors with at most this many elements stay dense literals even when a
/// resource is preferred: shape constants and scalars must be foldable.
static constexpr int64_t kMaxInlineElements = 64;

Type elementTypeOf(MLIRContext *context, int dataType) {
  Builder b(context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, false);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  // Storage-only types (kiln.cast converts them): numbered as ONNX 1.23's
  // TensorProto.DataType, which the compiled onnx.proto may predate.
  case kFloat8E4M3FN:
    return b.getType<Float8E4M3FNType>();
  case kFloat8E4M3FNUZ:
    return b.getType<Float8E4M3FNUZType>();
  case kFloat8E5M2:
    return b.getType<Float8E5M2Type>();
  case kFloat8E5M2FNUZ:
    return b.getType<Float8E5M2FNUZType>();
  case kUint4:
    return b.getIntegerType(4, /*isSigned=*/false);
  case kInt4:
    return b.getIntegerType(4);
  case kFloat4E2M1:
    return b.getType<Float4E2M1FNType>();
  case kFloat8E8M0:
    return b.getType<Float8E8M0FNUType>();
  case kUint2:
    return b.getIntegerType(2, /*isSigned=*/false);
  case kInt2:
    return b.getIntegerType(2);
  default:
    return {};
  }
}

llvm::StringRef dataTypeName(int dataType) {
  // TensorProto.DataType up to ONNX 1.23 (the compiled onnx.proto may be
  // older: the names are Kiln's, not the proto's).
  static const char *names[] = {
      "undefined",  "float",        "uint8",      "int8",           "uint16",
      "int16",      "int32",        "int64",      "string",         "bool",
      "float16",    "double",       "uint32",     "uint64",         "complex64",
      "complex128", "bfloat16",     "float8e4m3fn", "float8e4m3fnuz", "float8e5m2",
      "float8e5m2fnuz", "uint4",    "int4",       "float4e2m1",     "float8e8m0",
      "uint2",      "int2",         "float6e2m3", "float6e3m2"};
  if (dataType >= 0 && dataType < static_cast<int>(std::size(names)))
    return names[dataType];
  return "invalid";
}

int dataTypeOf(Type t) {
  if (t.isF32())
    return onnx::TensorProto::FLOAT;
  if (t.isF64())
    return onnx::TensorProto::DOUBLE;
  if (t.isF16())
    return onnx::TensorProto::FLOAT16;
  if (t.isBF16())
    return onnx::TensorProto::BFLOAT16;
  if (t.isUnsignedInteger(8))
    return onnx::TensorProto::UINT8;
  if (t.isUnsignedInteger(16))
    return onnx::TensorProto::UINT16;
  if (t.isUnsignedInteger(32))
    return onnx::TensorProto::UINT32;
  if (t.isUnsignedInteger(64))
    return onnx::TensorProto::UINT64;
  if (t.isInteger(16))
    return onnx::TensorProto::INT16;
  if (t.isInteger(64))
    return onnx::TensorProto::INT64;
  if (t.isInteger(32))
    return onnx::TensorProto::INT32;
  if (t.isInteger(8))
    return onnx::TensorProto::INT8;
  if (t.isInteger(1))
    return onnx::TensorProto::BOOL;
  if (isa<Float8E4M3FNType>(t))
    return kFloat8E4M3FN;
  if (isa<Float8E4M3FNUZType>(t))
    return kFloat8E4M3FNUZ;
  if (isa<Float8E5M2Type>(t))
    return kFloat8E5M2;
  if (isa<Float8E5M2FNUZType>(t))
    return kFloat8E5M2FNUZ;
  if (isa<Float4E2M1FNType>(t))
    return kFloat4E2M1;
  if (isa<Float8E8M0FNUType>(t))
    return kFloat8E8M0;
  if (t.isUnsignedInteger(4))
    return kUint4;
  if (t.isInteger(4))
    return kInt4;
  if (t.isUnsignedInteger(2))
    return kUint2;
  if (t.isInteger(2))
    return kInt2;
  return onnx::TensorProto::UNDEFINED;
}

static llvm::Error tensorError(const onnx::TensorProto &tensor,
                               const llvm::Twine &what) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "tensor '" + tensor.name() + "': " + what);
}

/// Bytes per element of the storage kiln uses for `type` (i1 and the 4-
/// and 2-bit types as one byte).
static size_t storageBytes(Type type) {
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

/// Bits per element of a type ONNX packs several to a byte (4 or 2), else 0.
static unsigned packedBits(Type type) {
  unsigned bits = type.getIntOrFloatBitWidth();
  return bits == 4 || bits == 2 ? bits : 0;
}

/// The elements of a 4- or 2-bit type unpacked from ONNX's packing.
static Expected<std::string> unpackSubByte(const onnx::TensorProto &tensor,
                                           llvm::StringRef packed, unsigned bits,
                                           int64_t count) {
  size_t need = packedSize(count, bits);
  if (packed.size() != need)
    return tensorError(tensor, "has " + llvm::Twine(packed.size()) + " bytes of data for " +
                                   llvm::Twine(count) + " elements of " +
                                   dataTypeName(tensor.data_type()) + " (" +
                                   llvm::Twine(need) + " bytes packed)");
  std::string out(count, '\0');
  unpackBits(packed, bits, count, out.data());
  return out;
}

/// Reads a tensor's external data into a string.
static Expected<std::string> readExternal(const onnx::TensorProto &tensor,
                                          llvm::StringRef modelDirectory) {
  std::string location;
  uint64_t offset = 0;
  int64_t length = -1;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "location")
      location = entry.value();
    else if (entry.key() == "offset" || entry.key() == "length") {
      char *end = nullptr;
      unsigned long long v = std::strtoull(entry.value().c_str(), &end, 10);
      if (entry.value().empty() || *end)
        return tensorError(tensor, "external data " + entry.key() + " '" +
                                       entry.value() + "' is not a number");
      if (entry.key() == "offset")
        offset = v;
      else
        length = static_cast<int64_t>(v);
    }
  }
  if (location.empty())
    return tensorError(tensor, "external data has no location");
  if (modelDirectory.empty())
    return tensorError(tensor, "external data '" + location +
                                   "' cannot be read: the model was given as bytes, "
                                   "with no folder");
  llvm::SmallString<256> path(location);
  if (llvm::sys::path::is_absolute(path) ||
      llvm::StringRef(location).contains(".."))
    return tensorError(tensor, "external data location '" + location +
                                   "' must be relative to the model and "
                                   "stay inside its folder");
  path = modelDirectory;
  llvm::sys::path::append(path, location);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return tensorError(tensor, "cannot read external data '" + path + "': " +
                                   buffer.getError().message());
  uint64_t size = (*buffer)->getBufferSize();
  if (offset > size)
    return tensorError(tensor, "external data offset " + llvm::Twine(offset) +
                                   " is past the end of '" + location + "' (" +
                                   llvm::Twine(size) + " bytes)");
  uint64_t available = size - offset;
  uint64_t count = length < 0 ? available : static_cast<uint64_t>(length);
  if (count > available)
    return tensorError(tensor, "external data '" + location + "' holds " +
                                   llvm::Twine(available) +
                                   " bytes after offset " + llvm::Twine(offset) +
                                   ", " + llvm::Twine(count) + " requested");
  return std::string((*buffer)->getBufferStart() + offset, count);
}

/// Collects the typed repeated fields of `tensor` into little-endian bytes.
static Expected<std::string> packTypedFields(const onnx::TensorProto &tensor,
                                             Type elementType, int64_t count) {
  // How many values the proto holds, checked before anything is sized by
  // the dims (which a hostile file makes as large as it likes).
  int have = -1;
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT: have = tensor.float_data_size(); break;
  case onnx::TensorProto::DOUBLE: have = tensor.double_data_size(); break;
  case onnx::TensorProto::INT64: have = tensor.int64_data_size(); break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64: have = tensor.uint64_data_size(); break;
  default: have = tensor.int32_data_size(); break;
  }
  if (have != count)
    return tensorError(tensor, "holds " + llvm::Twine(have) + " values for " +
                                   llvm::Twine(count) + " elements");
  std::string bytes;
  size_t width = storageBytes(elementType);
  bytes.resize(count * width);
  char *out = bytes.data();
  // memcpy from an empty repeated field would read a null pointer.
  auto copy = [&](const void *from, size_t n) {
    if (n)
      std::memcpy(out, from, n);
  };
  auto need = [&](int have) -> llvm::Error {
    if (have != count)
      return tensorError(tensor, "holds " + llvm::Twine(have) +
                                     " values for " + llvm::Twine(count) +
                                     " elements");
    return llvm::Error::success();
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (auto e = need(tensor.float_data_size()))
      return std::move(e);
    copy(tensor.float_data().data(), count * 4);
    break;
  case onnx::TensorProto::DOUBLE:
    if (auto e = need(tensor.double_data_size()))
      return std::move(e);
    copy(tensor.double_data().data(), count * 8);
    break;
  case onnx::TensorProto::INT64:
    if (auto e = need(tensor.int64_data_size()))
      return std::move(e);
    copy(tensor.int64_data().data(), count * 8);
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64: {
    if (auto e = need(tensor.uint64_data_size()))
      return std::move(e);
    for (int64_t i = 0; i < count; ++i) {
      uint64_t v = tensor.uint64_data(i);
      std::memcpy(out + i * width, &v, width);
    }
    break;
  }
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT16:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case kFloat8E4M3FN:
  case kFloat8E4M3FNUZ:
  case kFloat8E5M2:
  case kFloat8E5M2FNUZ:
  case kFloat8E8M0: {
    if (auto e = need(tensor.int32_data_size()))
      return std::move(e);
    for (int64_t i = 0; i < count; ++i) {
      int32_t v = tensor.int32_data(i);
      std::memcpy(out + i * width, &v, width); // little-endian truncation
    }
    break;
  }
  default:
    return tensorError(tensor, "unsupported data type " +
                                   dataTypeName(tensor.data_type()));
  }
  return bytes;
}

Expected<ElementsAttr> tensorToAttr(MLIRContext *context,
                                    onnx::TensorProto &tensor,
                                    llvm::StringRef modelDirectory,
                                    bool preferResource) {
  Type elementType = elementTypeOf(context, tensor.data_type());
  if (!elementType)
    return tensorError(tensor, "data type " + dataTypeName(tensor.data_type()) +
                                   " is not supported by kiln");
  SmallVector<int64_t> dims;
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    if (d < 0)
      return tensorError(tensor, "has negative dim " + llvm::Twine(d));
    if (d > 0 && count > (int64_t(1) << 40) / d)
      return tensorError(tensor, "is too large");
    dims.push_back(d);
    count *= d;
  }
  auto type = RankedTensorType::get(dims, elementType);
  size_t width = storageBytes(elementType);

  // Take the bytes without copying where the proto owns them.
  std::unique_ptr<std::string> bytes;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    Expected<std::string> external = readExternal(tensor, modelDirectory);
    if (!external)
      return external.takeError();
    bytes = std::make_unique<std::string>(std::move(*external));
  } else if (tensor.has_raw_data()) {
    bytes.reset(tensor.release_raw_data());
  } else if (packedBits(elementType)) {
    // int32_data holds the packed bytes, one to an entry.
    std::string packed;
    for (int32_t v : tensor.int32_data())
      packed += static_cast<char>(v);
    bytes = std::make_unique<std::string>(std::move(packed));
  } else {
    Expected<std::string> packed = packTypedFields(tensor, elementType, count);
    if (!packed)
      return packed.takeError();
    bytes = std::make_unique<std::string>(std::move(*packed));
  }
  if (unsigned bits = packedBits(elementType)) {
    Expected<std::string> unpacked = unpackSubByte(tensor, *bytes, bits, count);
    if (!unpacked)
      return unpacked.takeError();
    *bytes = std::move(*unpacked);
  }
  if (bytes->size() != count * width)
    return tensorError(tensor, "has " + llvm::Twine(bytes->size()) +
                                   " bytes of data for " + llvm::Twine(count) +
                                   " elements of " +
                                   dataTypeName(tensor.data_type()) + " (" +
                                   llvm::Twine(count * width) + " bytes)");

  if (elementType.isInteger(1)) {
    SmallVector<bool> values(count);
    for (int64_t i = 0; i < count; ++i)
      values[i] = (*bytes)[i] != 0;
    return cast<ElementsAttr>(DenseElementsAttr::get(type, values));
  }
  if (!preferResource || count <= kMaxInlineElements) {
    ArrayRef<char> raw(bytes->data(), bytes->size());
    if (count == 0)
      return cast<ElementsAttr>(DenseElementsAttr::get(type, ArrayRef<Attribute>{}));
    bool splat = false;
    if (!DenseElementsAttr::isValidRawBuffer(type, raw, splat))
      return tensorError(tensor, "data does not fit its type");
    return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(type, raw));
  }
  // The blob owns the string; its deleter frees it with the context.
  std::string *owned = bytes.release();
  AsmResourceBlob blob(
      ArrayRef<char>(owned->data(), owned->size()), alignof(int64_t),
      [owned](void *, size_t, size_t) { delete owned; },
      /*dataIsMutable=*/false);
  std::string name = tensor.name().empty() ? "weight" : tensor.name();
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, name, std::move(blob)));
}

Expected<ElementsAttr> readTensorFile(MLIRContext *context,
                                      llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(buffer.getError(),
                                   "cannot read '" + path + "': " +
                                       buffer.getError().message());
  llvm::SmallString<256> directory(path);
  llvm::sys::path::remove_filename(directory);
  return parseTensorProto(context, (*buffer)->getBuffer(), path,
                          directory.empty() ? "." : llvm::StringRef(directory));
}

Expected<ElementsAttr> parseTensorProto(MLIRContext *context, llvm::StringRef bytes,
                                        llvm::StringRef name, llvm::StringRef directory) {
  onnx::TensorProto tensor;
  if (bytes.size() > INT32_MAX ||
      !tensor.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "'" + name + "' is not a serialised ONNX TensorProto");
  return tensorToAttr(context, tensor, directory, /*preferResource=*/false);
}

} // namespace kiln::onnx_frontend
