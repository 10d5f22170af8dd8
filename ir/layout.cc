// ir/layout.cc — layouts: physical shapes, repacking and broadcast views (see layout.h).
#include "ir/layout.h"

#include <cstring>

#include "ir/error.h"

namespace onnxc {

std::string Layout::str(size_t rank) const {
  static const char* kSpatial[] = {"W", "HW", "DHW"};
  std::string sp = rank >= 3 && rank - 2 <= 3 ? kSpatial[rank - 3] : std::string(rank >= 2 ? rank - 2 : 0, 'S');
  switch (kind) {
    case Kind::Plain: return "";
    case Kind::NCHWc: return "NC" + sp + std::to_string(block) + "c";
    case Kind::Filter: return "OI" + sp + std::to_string(in_block) + "i" + std::to_string(block) + "o";
    case Kind::Panel: return "KN" + std::to_string(block) + "n";
    case Kind::PanelT: return "NK" + std::to_string(block) + "n";
    case Kind::Winograd: return "WF23OI" + std::to_string(block) + "o";
    case Kind::Pairs: return "OI" + sp + std::to_string(block) + "o" + std::to_string(in_block) + "i";
    case Kind::Quads: return "KN" + std::to_string(block) + "n4k";
  }
  return "";
}

Shape physical_shape(const Shape& s, const Layout& l) {
  if (l.is_plain()) return s;
  ONNXC_ASSERT(s.size() >= 2 && l.block > 0, "non-plain layout on a tensor of rank " + std::to_string(s.size()));
  Shape p;
  if (l.is_panel()) {
    ONNXC_ASSERT(s.size() == 2, "panel layout on a tensor of rank " + std::to_string(s.size()));
    const bool t = l.kind == Layout::Kind::PanelT;
    const int64_t K = t ? s[1] : s[0], N = t ? s[0] : s[1];
    return {ceil_div_pos(N, l.block), K, l.block};
  }
  if (l.kind == Layout::Kind::Quads) {
    ONNXC_ASSERT(s.size() == 2, "quads layout on a tensor of rank " + std::to_string(s.size()));
    return {ceil_div_pos(s[1], l.block), ceil_div_pos(s[0], 4), l.block, 4};
  }
  if (l.kind == Layout::Kind::Winograd) {
    ONNXC_ASSERT(s.size() == 4 && s[2] == 3 && s[3] == 3, "Winograd layout on a filter of shape " + shape_str(s));
    return {16, ceil_div_pos(s[0], l.block), s[1], l.block};
  }
  if (l.kind == Layout::Kind::Pairs) {
    ONNXC_ASSERT(l.in_block > 0, "pairs layout without a group size");
    p = {ceil_div_pos(s[0], l.block), ceil_div_pos(s[1], l.in_block)};
    p.insert(p.end(), s.begin() + 2, s.end());
    p.push_back(l.block);
    p.push_back(l.in_block);
    return p;
  }
  if (l.kind == Layout::Kind::NCHWc) {
    p = {s[0], ceil_div_pos(s[1], l.block)};
    p.insert(p.end(), s.begin() + 2, s.end());
    p.push_back(l.block);
  } else {
    ONNXC_ASSERT(l.in_block > 0, "filter layout without an input block");
    p = {ceil_div_pos(s[0], l.block), ceil_div_pos(s[1], l.in_block)};
    p.insert(p.end(), s.begin() + 2, s.end());
    p.push_back(l.in_block);
    p.push_back(l.block);
  }
  return p;
}

namespace {

// Calls f(plain flat index, stored flat index) for every logical element.
template <class F>
void for_each_mapping(const Shape& s, const Layout& l, F&& f) {
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  const int64_t A = s[0], B = s[1];
  if (l.is_panel()) {  // (k, n) of [K, N], or (n, k) of [N, K]: at [n / nr][k][n % nr]
    const int64_t nr = l.block;
    const bool t = l.kind == Layout::Kind::PanelT;
    const int64_t K = t ? B : A;
    for (int64_t r = 0; r < A; ++r)
      for (int64_t c = 0; c < B; ++c) {
        const int64_t k = t ? c : r, n = t ? r : c;
        f(r * B + c, ((n / nr) * K + k) * nr + n % nr);
      }
    return;
  }
  if (l.kind == Layout::Kind::Quads) {  // (k, n) of [K, N]: at [n / b][k / 4][n % b][k % 4]
    const int64_t b = l.block, KQ = ceil_div_pos(A, 4);
    for (int64_t k = 0; k < A; ++k)
      for (int64_t n = 0; n < B; ++n) f(k * B + n, (((n / b) * KQ + k / 4) * b + n % b) * 4 + k % 4);
    return;
  }
  if (l.kind == Layout::Kind::Pairs) {  // (o, i, k): at [o / b][i / g][k][o % b][i % g]
    const int64_t b = l.block, g = l.in_block, IP = ceil_div_pos(B, g);
    for (int64_t o = 0; o < A; ++o)
      for (int64_t i = 0; i < B; ++i)
        for (int64_t k = 0; k < inner; ++k) f((o * B + i) * inner + k, ((((o / b) * IP + i / g) * inner + k) * b + o % b) * g + i % g);
    return;
  }
  if (l.kind == Layout::Kind::NCHWc) {
    const int64_t b = l.block, CB = ceil_div_pos(B, b);
    for (int64_t n = 0; n < A; ++n)
      for (int64_t c = 0; c < B; ++c)
        for (int64_t k = 0; k < inner; ++k) f((n * B + c) * inner + k, ((n * CB + c / b) * inner + k) * b + c % b);
  } else {
    const int64_t bo = l.block, bi = l.in_block, IB = ceil_div_pos(B, bi);
    for (int64_t o = 0; o < A; ++o)
      for (int64_t i = 0; i < B; ++i)
        for (int64_t k = 0; k < inner; ++k)
          f((o * B + i) * inner + k, ((((o / bo) * IB + i / bi) * inner + k) * bi + i % bi) * bo + o % bo);
  }
}

// F(2×2, 3×3): U = G g G^T and back, g = L U L^T (L G = I).
constexpr double kG[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kL[3][4] = {{1, 0, 0, 0}, {0, 1, -1, 0}, {0, 0, 0, 1}};

Tensor winograd_pack(const Tensor& plain, const Layout& l) {
  ONNXC_ASSERT(plain.dtype == DType::F32, std::string("Winograd layout on a ") + dtype_name(plain.dtype) + " filter");
  const Shape& s = plain.shape;
  const int64_t O = s[0], I = s[1], b = l.block, OB = ceil_div_pos(O, b);
  Tensor r(plain.dtype, physical_shape(s, l));
  const float* g = reinterpret_cast<const float*>(plain.bytes.data());
  float* u = reinterpret_cast<float*>(r.bytes.data());
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i) {
      const float* k = g + (o * I + i) * 9;
      double t[4][3];  // G g
      for (int a = 0; a < 4; ++a)
        for (int c = 0; c < 3; ++c) t[a][c] = kG[a][0] * k[c] + kG[a][1] * k[3 + c] + kG[a][2] * k[6 + c];
      for (int a = 0; a < 4; ++a)
        for (int c = 0; c < 4; ++c) {
          const double v = t[a][0] * kG[c][0] + t[a][1] * kG[c][1] + t[a][2] * kG[c][2];
          u[(((a * 4 + c) * OB + o / b) * I + i) * b + o % b] = static_cast<float>(v);
        }
    }
  return r;
}

Tensor winograd_unpack(const Tensor& stored, const Shape& s, const Layout& l) {
  const int64_t O = s[0], I = s[1], b = l.block, OB = ceil_div_pos(O, b);
  Tensor r(stored.dtype, s);
  const float* u = reinterpret_cast<const float*>(stored.bytes.data());
  float* g = reinterpret_cast<float*>(r.bytes.data());
  for (int64_t o = 0; o < O; ++o)
    for (int64_t i = 0; i < I; ++i) {
      double m[4][4];
      for (int a = 0; a < 4; ++a)
        for (int c = 0; c < 4; ++c) m[a][c] = u[(((a * 4 + c) * OB + o / b) * I + i) * b + o % b];
      for (int y = 0; y < 3; ++y)
        for (int x = 0; x < 3; ++x) {
          double v = 0;
          for (int a = 0; a < 4; ++a)
            for (int c = 0; c < 4; ++c) v += kL[y][a] * m[a][c] * kL[x][c];
          g[(o * I + i) * 9 + y * 3 + x] = static_cast<float>(v);
        }
    }
  return r;
}

}  // namespace

Tensor to_layout(const Tensor& plain, const Layout& l) {
  if (l.is_plain()) return plain;
  if (l.kind == Layout::Kind::Winograd) return winograd_pack(plain, l);
  Tensor r(plain.dtype, physical_shape(plain.shape, l));
  const size_t es = dtype_size(plain.dtype);
  for_each_mapping(plain.shape, l, [&](int64_t p, int64_t q) { std::memcpy(&r.bytes[q * es], &plain.bytes[p * es], es); });
  return r;
}

Tensor to_plain(const Tensor& stored, const Shape& logical, const Layout& l) {
  if (l.is_plain()) return stored;
  ONNXC_ASSERT(stored.shape == physical_shape(logical, l), "stored shape " + shape_str(stored.shape) + " does not match " +
                                                               shape_str(logical) + " in layout " + l.str(logical.size()));
  if (l.kind == Layout::Kind::Winograd) return winograd_unpack(stored, logical, l);
  Tensor r(stored.dtype, logical);
  const size_t es = dtype_size(stored.dtype);
  for_each_mapping(logical, l, [&](int64_t p, int64_t q) { std::memcpy(&r.bytes[p * es], &stored.bytes[q * es], es); });
  return r;
}

bool nchwc_broadcast_view(const Shape& in, const Layout& in_layout, const Shape& out, int64_t b, Shape* view) {
  if (in.size() > out.size() || out.size() < 2) return false;
  if (in_layout.is_nchwc()) {
    if (in.size() != out.size() || in_layout.block != b) return false;
    *view = physical_shape(in, in_layout);
    return true;
  }
  if (!in_layout.is_plain()) return false;
  Shape s(out.size() - in.size(), 1);
  s.insert(s.end(), in.begin(), in.end());
  if (s[1] != 1) return false;
  s.push_back(1);
  *view = s;
  return true;
}

}  // namespace onnxc
