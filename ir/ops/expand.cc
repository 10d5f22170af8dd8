// ir/ops/expand.cc — Expand, Tile and Range. Any dtype for Expand and Tile.
//
// Expand (8, 13): broadcasts the input with the static 1-D `shape` input, numpy rules in
// both directions (shape may have a lower rank or 1s where the input is larger).
// Tile (1, 6, 13): out dim d = in dim d * repeats[d]; out[i] = in[i mod dims] per axis.
// repeats is the static input 1 (int64, one non-negative entry per input dim). Tile-1 took
// inputs (input, tiles, axis): one axis repeated `tiles` times; it is read the same way.
// Range (11): start, limit, delta scalars of one numeric dtype, all compile-time constants
// (an output whose length depends on runtime values is not static): n = max(ceil((limit -
// start) / delta), 0) elements start + i * delta, computed in the inputs' dtype (the float
// forms accumulate nothing: element i is start + i * delta). delta 0 is invalid.
// Range 27 adds float16/bfloat16 and attribute `stash_type`, the precision of a float16 range:
// the importer widens float16 to float32 (ir/dtype.h), which is stash_type 1, the default;
// another stash_type is refused (exit 3).
// Versions: Expand 8, 13; Tile 1, 6, 13; Range 11, 27. Same meaning at every opset up to 28.
// What backends read: expand/tile geometry is the shapes themselves, plus tile_repeats().
// The C kernels are kernels/expand.cc in the C backend.
#include <fmt/format.h>

#include <cmath>

#include "ir/ops/elementwise.h"
#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

class Expand : public Op {
 public:
  bool static_input(size_t i) const override { return i == 1; }

  void infer(Node& n) override {
    if (n.inputs.size() != 2) n.invalid("expects 2 inputs (input, shape), got " + std::to_string(n.inputs.size()));
    const Value& x = need_input(n, 0, "input");
    need_input(n, 1, "shape");
    std::vector<int64_t> s = static_ints(n, 1, "shape");
    for (int64_t d : s)
      if (d < 0) n.invalid("shape " + shape_str(s) + " has a negative entry");
    Shape out;
    if (!broadcast_shapes(x.shape, s, &out))
      n.invalid("input " + shape_str(x.shape) + " cannot be broadcast to shape " + shape_str(s));
    set_output(n, 0, x.dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    auto idx = broadcast_index(out[0].shape, in[0]->shape);
    for (size_t i = 0; i < idx.size(); ++i) copy_elem(out[0], static_cast<int64_t>(i), *in[0], idx[i]);
  }

  FusionKind kind() const override { return FusionKind::Broadcast; }
  int64_t min_opset() const override { return 8; }
};

class Tile : public Op {
 public:
  bool static_input(size_t i) const override { return i >= 1; }

  void infer(Node& n) override {
    const Value& x = need_input(n, 0, "input");
    size_t r = x.shape.size();
    if (n.opset < 6) {
      if (n.inputs.size() != 3) n.invalid("expects 3 inputs (input, tiles, axis) before opset 6");
      std::vector<int64_t> tiles = static_ints(n, 1, "tiles"), axis = static_ints(n, 2, "axis");
      if (tiles.size() != 1 || axis.size() != 1) n.invalid("tiles and axis must be scalars");
      int64_t a = move_axis(n, axis[0], static_cast<int64_t>(r), "axis");
      repeats_.assign(r, 1);
      repeats_[static_cast<size_t>(a)] = tiles[0];
    } else {
      if (n.inputs.size() != 2) n.invalid("expects 2 inputs (input, repeats), got " + std::to_string(n.inputs.size()));
      need_input(n, 1, "repeats");
      repeats_ = static_ints(n, 1, "repeats");
    }
    if (repeats_.size() != r) n.invalid(fmt::format("repeats has {} entries for input {}", repeats_.size(), shape_str(x.shape)));
    Shape out = x.shape;
    for (size_t d = 0; d < r; ++d) {
      if (repeats_[d] < 0) n.invalid(fmt::format("repeats {} has a negative entry", shape_str(repeats_)));
      if (repeats_[d] > 0 && out[d] > std::numeric_limits<int64_t>::max() / repeats_[d]) n.invalid("the output is too large");
      out[d] *= repeats_[d];
    }
    set_output(n, 0, x.dtype, out);
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    const Shape& xs = in[0]->shape;
    const Shape& os = out[0].shape;
    for (int64_t i = 0, total = out[0].numel(); i < total; ++i) {
      Shape p = unravel(i, os);
      for (size_t d = 0; d < p.size(); ++d) p[d] %= xs[d];
      copy_elem(out[0], i, *in[0], ravel(p, xs));
    }
  }

  FusionKind kind() const override { return FusionKind::Injective; }
  const std::vector<int64_t>& repeats() const { return repeats_; }

 private:
  std::vector<int64_t> repeats_;
};

class Range : public Op {
 public:
  bool static_input(size_t) const override { return true; }

  void parse(AttrReader& a) override {
    if (a.opset() < 27) return;
    int64_t st = a.i("stash_type", 1);
    if (st != 1) a.node().unsupported(fmt::format("stash_type {} (onnxc computes a range in float32, stash_type 1, or in its own dtype)", st));
  }

  void infer(Node& n) override {
    if (n.inputs.size() != 3) n.invalid("expects 3 inputs (start, limit, delta), got " + std::to_string(n.inputs.size()));
    const char* names[] = {"start", "limit", "delta"};
    DType t = need_input(n, 0, "start").dtype;
    for (size_t i = 0; i < 3; ++i) {
      const Value& v = need_input(n, i, names[i]);
      if (v.dtype != t) n.invalid(fmt::format("{} is {}, start is {}", names[i], dtype_name(v.dtype), dtype_name(t)));
      if (numel(v.shape) != 1) n.invalid(fmt::format("{} must be a scalar, got shape {}", names[i], shape_str(v.shape)));
    }
    expect_dtype(n, 0, {DType::F32, DType::F64, DType::I16, DType::I32, DType::I64});
    int64_t count = 0;
    if (dtype_is_float(t)) {
      double s = static_tensor(n, 0, "start").get(0), l = static_tensor(n, 1, "limit").get(0), d = static_tensor(n, 2, "delta").get(0);
      if (d == 0 || !std::isfinite(s) || !std::isfinite(l) || !std::isfinite(d))
        n.invalid(fmt::format("start {}, limit {}, delta {} do not give a finite range", s, l, d));
      double c = std::ceil((l - s) / d);
      if (c > 1e12) n.invalid(fmt::format("the range of {} elements is too large", c));
      count = c > 0 ? static_cast<int64_t>(c) : 0;
    } else {
      int64_t s = static_tensor(n, 0, "start").get_i64(0), l = static_tensor(n, 1, "limit").get_i64(0),
              d = static_tensor(n, 2, "delta").get_i64(0);
      if (d == 0) n.invalid("delta is 0");
      // ceil((l - s) / d) in 128 bits: the difference of two int64 may not fit in one.
      __int128 diff = static_cast<__int128>(l) - s, q = diff / d;
      if (q * d != diff && ((diff < 0) == (d < 0))) ++q;
      if (q > (int64_t{1} << 40)) n.invalid(fmt::format("the range from {} to {} by {} is too large", s, l, d));
      count = q > 0 ? static_cast<int64_t>(q) : 0;
    }
    set_output(n, 0, t, {count});
  }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    visit_dtype(out[0].dtype, [&](auto v) {
      using T = decltype(v);
      T s = in[0]->data<T>()[0], d = in[2]->data<T>()[0];
      T* y = out[0].data<T>();
      for (int64_t i = 0, n = out[0].numel(); i < n; ++i) {
        if constexpr (std::is_floating_point_v<T>) y[i] = static_cast<T>(s + static_cast<T>(i) * d);
        else y[i] = static_cast<T>(static_cast<uint64_t>(s) + static_cast<uint64_t>(i) * static_cast<uint64_t>(d));  // fits T
      }
    });
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return 11; }
};

}  // namespace

const std::vector<int64_t>& tile_repeats(const Node& n) { return op_as<Tile>(n).repeats(); }

void register_expand(OpTable& t) {
  t["Expand"] = [] { return std::unique_ptr<Op>(std::make_unique<Expand>()); };
  t["Tile"] = [] { return std::unique_ptr<Op>(std::make_unique<Tile>()); };
  t["Range"] = [] { return std::unique_ptr<Op>(std::make_unique<Range>()); };
}

}  // namespace onnxc
