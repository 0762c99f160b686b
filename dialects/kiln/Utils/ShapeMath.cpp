//===- ShapeMath.cpp - shape rules of kiln ops ----------------------------===//

#include "dialects/kiln/Utils/ShapeMath.h"

#include <algorithm>

namespace kiln::shape {

static std::string dimsToString(const Dims &dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      s += ", ";
    s += dims[i] == kDynamic ? "?" : std::to_string(dims[i]);
  }
  return s + "]";
}

ShapeOrError broadcast(const std::vector<Dims> &shapes) {
  size_t rank = 0;
  for (const Dims &s : shapes)
    rank = std::max(rank, s.size());
  Dims result(rank, 1);
  for (const Dims &s : shapes) {
    size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &out = result[offset + i];
      int64_t in = s[i];
      if (in == 1)
        continue;
      if (out == 1) {
        out = in;
      } else if (in == kDynamic) {
        // out is static > 1 or dynamic: the run-time size must match it.
        continue;
      } else if (out == kDynamic) {
        out = in;
      } else if (in != out) {
        std::string all;
        for (const Dims &t : shapes)
          all += (all.empty() ? "" : " and ") + dimsToString(t);
        return ShapeOrError::failure("shapes " + all +
                                     " do not broadcast: dim " +
                                     std::to_string(offset + i) + " is " +
                                     std::to_string(out) + " vs " +
                                     std::to_string(in));
      }
    }
  }
  return {result, {}};
}

ShapeOrError windowOutput(int64_t input, int64_t kernel, int64_t stride,
                          int64_t padLow, int64_t padHigh, int64_t dilation,
                          bool ceilMode) {
  if (kernel <= 0 || stride <= 0 || dilation <= 0)
    return ShapeOrError::failure(
        "kernel size, stride and dilation must be positive");
  if (padLow < 0 || padHigh < 0)
    return ShapeOrError::failure("pads must not be negative");
  if (input == kDynamic)
    return {{kDynamic}, {}};
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t room = input + padLow + padHigh - span;
  if (room < 0)
    return ShapeOrError::failure(
        "window of extent " + std::to_string(span) +
        " does not fit in a padded input of " +
        std::to_string(input + padLow + padHigh));
  int64_t out = (ceilMode ? (room + stride - 1) / stride : room / stride) + 1;
  if (ceilMode && (out - 1) * stride >= input + padLow)
    --out;
  return {{out}, {}};
}

ShapeOrError reshape(const Dims &input, const Dims &spec) {
  Dims result(spec.size());
  int inferredIndex = -1;
  int64_t known = 1;
  bool knownIsDynamic = false;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t s = spec[i];
    if (s == -1) {
      if (inferredIndex >= 0)
        return ShapeOrError::failure("shape has more than one -1");
      inferredIndex = static_cast<int>(i);
      continue;
    }
    if (s < -1)
      return ShapeOrError::failure("shape entry " + std::to_string(s) +
                                   " is not a size, 0 or -1");
    if (s == 0) {
      if (i >= input.size())
        return ShapeOrError::failure("shape entry " + std::to_string(i) +
                                     " is 0 but the input has rank " +
                                     std::to_string(input.size()));
      s = input[i];
    }
    result[i] = s;
    if (s == kDynamic)
      knownIsDynamic = true;
    else
      known *= s;
  }
  int64_t total = numElements(input);
  if (inferredIndex >= 0) {
    if (total == kDynamic || knownIsDynamic) {
      result[inferredIndex] = kDynamic;
    } else if (known == 0 || total % known != 0) {
      return ShapeOrError::failure(
          "cannot infer the -1 entry: " + std::to_string(total) +
          " elements do not divide into " + std::to_string(known));
    } else {
      result[inferredIndex] = total / known;
    }
  } else if (total != kDynamic && !knownIsDynamic && total != known) {
    return ShapeOrError::failure("reshape of " + std::to_string(total) +
                                 " elements into " + dimsToString(result) +
                                 " (" + std::to_string(known) + " elements)");
  }
  return {result, {}};
}

int64_t sliceExtent(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (dim == kDynamic || step == 0)
    return kDynamic;
  auto clampIndex = [&](int64_t v, int64_t lo, int64_t hi) {
    if (v < 0)
      v = v < -dim ? -1 : v + dim; // avoid overflow for INT64_MIN sentinels
    return std::clamp(v, lo, hi);
  };
  if (step > 0) {
    start = clampIndex(start, 0, dim);
    end = clampIndex(end, 0, dim);
    return end > start ? (end - start + step - 1) / step : 0;
  }
  start = clampIndex(start, -1, dim - 1);
  end = clampIndex(end, -1, dim - 1);
  return start > end ? (start - end + (-step) - 1) / (-step) : 0;
}

Dims strides(const Dims &shape) {
  Dims out(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    out[i] = out[i + 1] * shape[i + 1];
  return out;
}

bool swapsLastTwo(const Dims &perm) {
  int64_t rank = static_cast<int64_t>(perm.size());
  if (rank < 2 || perm[rank - 1] != rank - 2 || perm[rank - 2] != rank - 1)
    return false;
  for (int64_t d = 0; d < rank - 2; ++d)
    if (perm[d] != d)
      return false;
  return true;
}

int64_t numElements(const Dims &dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d == kDynamic)
      return kDynamic;
    n *= d;
  }
  return n;
}

} // namespace kiln::shape
