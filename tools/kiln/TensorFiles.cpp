//===- TensorFiles.cpp - tensors in .npy and ONNX .pb files ---------------===//

#include "tools/kiln/TensorFiles.h"

#include "frontends/onnx/PackedBits.h"

#include "kiln/kiln_model_abi.h"
#include "onnx/onnx.pb.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

namespace kiln::cli {

static llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static size_t dtypeSize(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_F64: case KILN_DTYPE_I64: case KILN_DTYPE_U64: return 8;
  case KILN_DTYPE_F32: case KILN_DTYPE_I32: case KILN_DTYPE_U32: return 4;
  case KILN_DTYPE_F16: case KILN_DTYPE_BF16: case KILN_DTYPE_I16: case KILN_DTYPE_U16: return 2;
  default: return 1;
  }
}

int64_t HostTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

void HostTensor::pointStrings() {
  bytes.resize(strings.size() * sizeof(const char *));
  for (size_t i = 0; i < strings.size(); ++i) {
    const char *p = strings[i].c_str();
    std::memcpy(bytes.data() + i * sizeof(p), &p, sizeof(p));
  }
}

static const struct {
  const char *npy;
  int32_t dtype;
} kNpyTypes[] = {{"<f4", KILN_DTYPE_F32}, {"<f8", KILN_DTYPE_F64}, {"<f2", KILN_DTYPE_F16},
                 {"<i8", KILN_DTYPE_I64}, {"<i4", KILN_DTYPE_I32}, {"<i2", KILN_DTYPE_I16},
                 {"|i1", KILN_DTYPE_I8},  {"|u1", KILN_DTYPE_U8},  {"<u2", KILN_DTYPE_U16},
                 {"<u4", KILN_DTYPE_U32}, {"<u8", KILN_DTYPE_U64}, {"|b1", KILN_DTYPE_BOOL}};

/// The byte size of `t`, or an error naming `path` when a dim is negative
/// or the size passes 2^48 bytes (the runtime's limit, kiln_model_abi.h).
static llvm::Expected<size_t> checkedBytes(llvm::StringRef path, const HostTensor &t) {
  uint64_t bytes = dtypeSize(t.dtype);
  for (int64_t d : t.dims) {
    if (d < 0)
      return error("'" + path + "': negative dim " + llvm::Twine(d));
    if (d != 0 && bytes > (uint64_t(1) << 48) / uint64_t(d))
      return error("'" + path + "': the tensor is larger than 2^48 bytes");
    bytes *= uint64_t(d);
  }
  return static_cast<size_t>(bytes);
}

static llvm::Expected<HostTensor> readNpy(llvm::StringRef path, llvm::StringRef data) {
  if (data.size() < 10 || !data.starts_with("\x93NUMPY"))
    return error("'" + path + "' is not a .npy file");
  unsigned major = static_cast<unsigned char>(data[6]);
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = static_cast<unsigned char>(data[8]) | (static_cast<unsigned char>(data[9]) << 8);
    headerStart = 10;
  } else {
    if (data.size() < 12)
      return error("'" + path + "' is truncated");
    headerLength = 0;
    for (int i = 0; i < 4; ++i)
      headerLength |= size_t(static_cast<unsigned char>(data[8 + i])) << (8 * i);
    headerStart = 12;
  }
  if (headerStart + headerLength > data.size())
    return error("'" + path + "' is truncated");
  llvm::StringRef header = data.substr(headerStart, headerLength);
  HostTensor t;
  auto descrAt = header.find("'descr':");
  if (descrAt == llvm::StringRef::npos)
    return error("'" + path + "': no dtype in the .npy header");
  llvm::StringRef descr = header.drop_front(descrAt + 8).ltrim();
  descr = descr.drop_front(1);
  descr = descr.take_until([](char c) { return c == '\''; });
  for (const auto &entry : kNpyTypes)
    if (descr == entry.npy || (descr.size() == 3 && descr[0] == '=' && descr.drop_front() == llvm::StringRef(entry.npy).drop_front()))
      t.dtype = entry.dtype;
  if (!t.dtype)
    return error("'" + path + "': unsupported .npy dtype '" + descr + "'");
  if (header.contains("'fortran_order': True"))
    return error("'" + path + "': Fortran-ordered arrays are not supported");
  auto shapeAt = header.find("'shape':");
  if (shapeAt == llvm::StringRef::npos)
    return error("'" + path + "': no shape in the .npy header");
  llvm::StringRef shape = header.drop_front(shapeAt + 8).ltrim();
  shape = shape.drop_front(1).take_until([](char c) { return c == ')'; });
  llvm::SmallVector<llvm::StringRef> parts;
  shape.split(parts, ',', -1, false);
  for (llvm::StringRef p : parts) {
    p = p.trim();
    if (p.empty())
      continue;
    int64_t d;
    if (p.getAsInteger(10, d) || d < 0)
      return error("'" + path + "': bad shape entry '" + p + "'");
    t.dims.push_back(d);
  }
  if (t.dims.size() > KILN_MAX_RANK)
    return error("'" + path + "': rank " + llvm::Twine(t.dims.size()) + " is over " +
                 llvm::Twine(KILN_MAX_RANK));
  auto checked = checkedBytes(path, t);
  if (!checked)
    return checked.takeError();
  size_t bytes = *checked;
  llvm::StringRef payload = data.drop_front(headerStart + headerLength);
  if (payload.size() < bytes)
    return error("'" + path + "' holds " + llvm::Twine(payload.size()) + " bytes of data, " +
                 llvm::Twine(bytes) + " expected");
  t.bytes.assign(payload.begin(), payload.begin() + bytes);
  return t;
}

/// Bits per element of a dtype ONNX packs several to a byte (4 or 2), else 0.
static unsigned packedBits(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_I4: case KILN_DTYPE_U4: case KILN_DTYPE_F4E2M1: return 4;
  case KILN_DTYPE_I2: case KILN_DTYPE_U2: return 2;
  default: return 0;
  }
}

/// A .pb of 4- or 2-bit elements: ONNX packs them into bytes (raw data, or
/// int32_data one byte an entry), the first in the low bits; kiln holds
/// one per byte (kiln_model_abi.h).
static llvm::Expected<HostTensor> unpackPb(llvm::StringRef path, const onnx::TensorProto &proto,
                                           HostTensor t, unsigned bits, size_t count) {
  size_t need = onnx_frontend::packedSize(count, bits);
  std::string packed;
  if (proto.has_raw_data()) {
    packed = proto.raw_data();
  } else {
    for (int32_t v : proto.int32_data())
      packed += static_cast<char>(v);
  }
  if (packed.size() != need)
    return error("'" + path + "': " + llvm::Twine(packed.size()) + " bytes of packed data for " +
                 llvm::Twine(count) + " elements (" + llvm::Twine(need) + " expected)");
  t.bytes.resize(count);
  onnx_frontend::unpackBits(packed, bits, count, t.bytes.data());
  return t;
}

static llvm::Expected<HostTensor> readPb(llvm::StringRef path, llvm::StringRef data) {
  onnx::TensorProto proto;
  if (data.size() > INT32_MAX || !proto.ParseFromArray(data.data(), static_cast<int>(data.size())))
    return error("'" + path + "' is not a serialised ONNX TensorProto");
  HostTensor t;
  static const int32_t fromOnnx[] = {0, KILN_DTYPE_F32, KILN_DTYPE_U8, KILN_DTYPE_I8,
                                     KILN_DTYPE_U16, KILN_DTYPE_I16, KILN_DTYPE_I32,
                                     KILN_DTYPE_I64, KILN_DTYPE_STRING, KILN_DTYPE_BOOL,
                                     KILN_DTYPE_F16,
                                     KILN_DTYPE_F64, KILN_DTYPE_U32, KILN_DTYPE_U64, 0, 0,
                                     KILN_DTYPE_BF16, KILN_DTYPE_F8E4M3FN,
                                     KILN_DTYPE_F8E4M3FNUZ, KILN_DTYPE_F8E5M2,
                                     KILN_DTYPE_F8E5M2FNUZ, KILN_DTYPE_U4, KILN_DTYPE_I4,
                                     KILN_DTYPE_F4E2M1, KILN_DTYPE_F8E8M0, KILN_DTYPE_U2,
                                     KILN_DTYPE_I2};
  int type = proto.data_type();
  if (type <= 0 || type >= static_cast<int>(std::size(fromOnnx)) || !fromOnnx[type])
    return error("'" + path + "': unsupported ONNX data type " + llvm::Twine(type));
  t.dtype = fromOnnx[type];
  if (proto.dims_size() > KILN_MAX_RANK)
    return error("'" + path + "': rank " + llvm::Twine(proto.dims_size()) + " is over " +
                 llvm::Twine(KILN_MAX_RANK));
  for (int64_t d : proto.dims())
    t.dims.push_back(d);
  if (t.dtype == KILN_DTYPE_STRING) {
    int64_t count = 1;
    for (int64_t d : t.dims) {
      if (d < 0)
        return error("'" + path + "': negative dim " + llvm::Twine(d));
      count = d != 0 && count > (int64_t(1) << 48) / d ? -1 : count * d;
      if (count < 0)
        return error("'" + path + "': too many elements");
    }
    if (static_cast<int64_t>(proto.string_data_size()) != count)
      return error("'" + path + "': " + llvm::Twine(proto.string_data_size()) +
                   " strings for dims of " + llvm::Twine(t.numElements()) + " elements");
    t.strings.assign(proto.string_data().begin(), proto.string_data().end());
    return t;
  }
  auto checked = checkedBytes(path, t);
  if (!checked)
    return checked.takeError();
  size_t width = dtypeSize(t.dtype), count = *checked / width;
  if (unsigned bits = packedBits(t.dtype))
    return unpackPb(path, proto, std::move(t), bits, count);
  // Typed fields hold at least a byte per element; the raw data exactly
  // the tensor's bytes: a size beyond what the file carries is refused
  // before it is allocated.
  if (*checked > data.size() * width)
    return error("'" + path + "': dims of " + llvm::Twine(*checked) +
                 " bytes, more than the file holds");
  t.bytes.resize(*checked);
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != t.bytes.size())
      return error("'" + path + "': raw data does not match the dims");
    if (!t.bytes.empty()) // an empty vector's data() may be null
      std::memcpy(t.bytes.data(), proto.raw_data().data(), t.bytes.size());
    return t;
  }
  auto fill = [&](auto field) -> llvm::Error {
    if (static_cast<size_t>(field.size()) != count)
      return error("'" + path + "': typed data does not match the dims");
    for (size_t i = 0; i < count; ++i) {
      auto v = field.Get(i);
      std::memcpy(t.bytes.data() + i * width, &v, width);
    }
    return llvm::Error::success();
  };
  llvm::Error e = llvm::Error::success();
  switch (t.dtype) {
  case KILN_DTYPE_F32: e = fill(proto.float_data()); break;
  case KILN_DTYPE_F64: e = fill(proto.double_data()); break;
  case KILN_DTYPE_I64: e = fill(proto.int64_data()); break;
  case KILN_DTYPE_U32: case KILN_DTYPE_U64: e = fill(proto.uint64_data()); break;
  default: e = fill(proto.int32_data()); break;
  }
  if (e)
    return std::move(e);
  return t;
}

llvm::Expected<HostTensor> readTensor(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, false, false);
  if (!buffer)
    return error("cannot read '" + path + "': " + buffer.getError().message());
  return parseTensor((*buffer)->getBuffer(), path);
}

llvm::Expected<HostTensor> parseTensor(llvm::StringRef data, llvm::StringRef name) {
  if (data.starts_with("\x93NUMPY"))
    return readNpy(name, data);
  return readPb(name, data);
}

/// The semantics of a float8 / float4 dtype, or null.
static const llvm::fltSemantics *lowPrecisionSemantics(int32_t dtype) {
  switch (dtype) {
  case KILN_DTYPE_F8E4M3FN: return &llvm::APFloat::Float8E4M3FN();
  case KILN_DTYPE_F8E4M3FNUZ: return &llvm::APFloat::Float8E4M3FNUZ();
  case KILN_DTYPE_F8E5M2: return &llvm::APFloat::Float8E5M2();
  case KILN_DTYPE_F8E5M2FNUZ: return &llvm::APFloat::Float8E5M2FNUZ();
  case KILN_DTYPE_F8E8M0: return &llvm::APFloat::Float8E8M0FNU();
  case KILN_DTYPE_F4E2M1: return &llvm::APFloat::Float4E2M1FN();
  default: return nullptr;
  }
}

/// NumPy has no storage-only types: float8 / float4 are written as float32
/// values, int4 / int2 as int8, uint4 / uint2 as uint8.
static HostTensor asNumpyType(const HostTensor &t) {
  HostTensor out = t;
  if (lowPrecisionSemantics(t.dtype)) {
    out.dtype = KILN_DTYPE_F32;
    out.bytes.resize(t.bytes.size() * 4);
    for (size_t i = 0; i < t.bytes.size(); ++i) {
      float v = static_cast<float>(elementAsDouble(t, i));
      std::memcpy(out.bytes.data() + 4 * i, &v, 4);
    }
  } else if (t.dtype == KILN_DTYPE_I4 || t.dtype == KILN_DTYPE_I2) {
    out.dtype = KILN_DTYPE_I8;
    for (size_t i = 0; i < t.bytes.size(); ++i)
      out.bytes[i] = static_cast<char>(static_cast<int>(elementAsDouble(t, i)));
  } else if (t.dtype == KILN_DTYPE_U4 || t.dtype == KILN_DTYPE_U2) {
    out.dtype = KILN_DTYPE_U8;
  }
  return out;
}

llvm::Error writeNpy(llvm::StringRef path, const HostTensor &stored) {
  if (stored.dtype == KILN_DTYPE_STRING)
    return error("cannot write strings to .npy ('" + path + "')");
  HostTensor t = asNumpyType(stored);
  const char *descr = nullptr;
  for (const auto &entry : kNpyTypes)
    if (entry.dtype == t.dtype)
      descr = entry.npy;
  if (!descr)
    return error("cannot write dtype " + llvm::Twine(t.dtype) + " to .npy");
  std::string shape = "(";
  for (size_t i = 0; i < t.dims.size(); ++i)
    shape += std::to_string(t.dims[i]) + (t.dims.size() == 1 ? "," : i + 1 < t.dims.size() ? ", " : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " +
                       shape + ", }";
  while ((10 + header.size() + 1) % 64)
    header += ' ';
  header += '\n';
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return error("cannot write '" + path + "': " + ec.message());
  os << "\x93NUMPY" << '\x01' << '\x00';
  os << static_cast<char>(header.size() & 0xff) << static_cast<char>(header.size() >> 8);
  os << header;
  os.write(t.bytes.data(), t.bytes.size());
  return llvm::Error::success();
}

/// IEEE half precision bits to double (subnormals, infinities and NaN
/// included).
static double halfToDouble(uint16_t h) {
  int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(mantissa, -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(mantissa + 1024, exponent - 25);
  return sign ? -magnitude : magnitude;
}

/// bfloat16 bits are the top half of a float's.
static double bfloat16ToDouble(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

double elementAsDouble(int32_t dtype, const void *data, int64_t i) {
  auto at = [&](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, static_cast<const char *>(data) + i * sizeof(v), sizeof(v));
    return static_cast<double>(v);
  };
  switch (dtype) {
  case KILN_DTYPE_F32: return at(float());
  case KILN_DTYPE_F64: return at(double());
  case KILN_DTYPE_I64: return at(int64_t());
  case KILN_DTYPE_I32: return at(int32_t());
  case KILN_DTYPE_I16: return at(int16_t());
  case KILN_DTYPE_I8: return at(int8_t());
  case KILN_DTYPE_U8: case KILN_DTYPE_BOOL: return at(uint8_t());
  case KILN_DTYPE_U16: return at(uint16_t());
  case KILN_DTYPE_U32: return at(uint32_t());
  case KILN_DTYPE_U64: return at(uint64_t());
  case KILN_DTYPE_F16: return halfToDouble(static_cast<uint16_t>(at(uint16_t())));
  case KILN_DTYPE_BF16: return bfloat16ToDouble(static_cast<uint16_t>(at(uint16_t())));
  case KILN_DTYPE_I4: case KILN_DTYPE_I2: {
    // The low bits, sign-extended.
    unsigned bits = dtype == KILN_DTYPE_I4 ? 4 : 2;
    int v = static_cast<uint8_t>(at(uint8_t())) & ((1 << bits) - 1);
    return v >= (1 << (bits - 1)) ? v - (1 << bits) : v;
  }
  case KILN_DTYPE_U4: return static_cast<uint8_t>(at(uint8_t())) & 0xF;
  case KILN_DTYPE_U2: return static_cast<uint8_t>(at(uint8_t())) & 0x3;
  }
  if (const llvm::fltSemantics *semantics = lowPrecisionSemantics(dtype)) {
    unsigned bits = llvm::APFloat::getSizeInBits(*semantics);
    uint8_t byte = static_cast<uint8_t>(at(uint8_t())) & ((1u << bits) - 1);
    llvm::APFloat v(*semantics, llvm::APInt(bits, byte));
    bool lost;
    v.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &lost);
    return v.convertToDouble();
  }
  return NAN; // unreachable: every kiln dtype is handled above
}

double elementAsDouble(const HostTensor &t, int64_t i) {
  return elementAsDouble(t.dtype, t.bytes.data(), i);
}

} // namespace kiln::cli
