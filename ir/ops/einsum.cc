// ir/ops/einsum.cc — Einsum(Inputs...) with attribute equation (numpy's einsum notation):
// each comma-separated term labels the dims of one input with letters (a-z, A-Z) and at
// most one "..." for any number of leading/middle dims; "->" and the output's labels
// follow, or, without "->" (implicit form), the output is the ellipsis dims then the
// letters that appear exactly once, in alphabetical (ASCII) order. Every output element is
// the sum, over all values of the labels not in the output, of the product of the inputs'
// elements. Covered: any number of inputs, matrix products and batched products
// ("bij,bjk->bik", "bhid,bhjd->bhij"), transposes ("ij->ji"), reductions ("ij->i", "i,i"),
// outer products, diagonals (a letter repeated in one term: "ii->i", "bii->bi"), ellipsis
// dims (broadcast where one side has 1). A letter's dims must agree across terms. float32
// and float64 (the sum in double); integer Einsum is refused (exit 3).
// Versions: 12, 28 (bfloat16 only); same meaning up to opset 28. The C kernel is kernels/einsum.cc.
#include "ir/ops/einsum.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ir/ops/move_common.h"
#include "ir/ops/ops.h"

namespace onnxc {
namespace {

// One term: its labels in order, letters as themselves, ellipsis dims as -1.
using Term = std::vector<int>;

class Einsum : public Op {
 public:
  void parse(AttrReader& a) override {
    if (!a.has("equation")) a.node().invalid("attribute 'equation' is required");
    eq_ = a.s("equation", "");
  }

  Term parse_term(const Node& n, const std::string& s, bool* has_ellipsis) const {
    Term t;
    *has_ellipsis = false;
    for (size_t i = 0; i < s.size(); ++i) {
      char c = s[i];
      if (c == '.') {
        if (s.compare(i, 3, "...") != 0 || *has_ellipsis)
          n.invalid(fmt::format("equation '{}': term '{}' has a '.' that is not one '...'", eq_, s));
        *has_ellipsis = true;
        t.push_back(-1);
        i += 2;
      } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
        t.push_back(c);
      } else {
        n.invalid(fmt::format("equation '{}': character '{}' is not a letter, ',', '...' or '->'", eq_, c));
      }
    }
    return t;
  }

  void infer(Node& n) override {
    if (n.inputs.empty()) n.invalid("expects at least 1 input");
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      need_input(n, i, "Inputs");
      if (dtype_is_int(n.in(i)->dtype)) n.unsupported(fmt::format("integer Einsum ({}) is not supported (float32, float64 only)", dtype_name(n.in(i)->dtype)));
      expect_dtype(n, i, {DType::F32, DType::F64});
      if (n.in(i)->dtype != n.in(0)->dtype) n.invalid(fmt::format("input {} has dtype {}, input 0 {}", i, dtype_name(n.in(i)->dtype), dtype_name(n.in(0)->dtype)));
    }
    std::string s;
    for (char c : eq_)
      if (c != ' ') s += c;
    std::string lhs = s, rhs;
    bool explicit_out = false;
    if (size_t p = s.find("->"); p != std::string::npos) {
      lhs = s.substr(0, p);
      rhs = s.substr(p + 2);
      explicit_out = true;
    }
    std::vector<std::string> terms;
    for (size_t b = 0;;) {
      size_t e = lhs.find(',', b);
      terms.push_back(lhs.substr(b, e == std::string::npos ? std::string::npos : e - b));
      if (e == std::string::npos) break;
      b = e + 1;
    }
    if (terms.size() != n.inputs.size())
      n.invalid(fmt::format("equation '{}' has {} input term(s) but the node has {} input(s)", eq_, terms.size(), n.inputs.size()));
    // Labels: letters keep their char code; ellipsis dims get 256 + k (k counted from the
    // right, so broadcasting aligns them right).
    std::map<int, int64_t> size;
    std::map<int, int> count;
    int64_t ell_rank = 0;
    std::vector<std::vector<int>> labels(terms.size());  // per input, per dim
    g_.in_stride.assign(terms.size(), {});
    for (size_t i = 0; i < terms.size(); ++i) {
      bool ell = false;
      Term t = parse_term(n, terms[i], &ell);
      const Shape& xs = n.in(i)->shape;
      int64_t letters = static_cast<int64_t>(t.size()) - (ell ? 1 : 0), r = static_cast<int64_t>(xs.size());
      if (ell ? r < letters : r != letters)
        n.invalid(fmt::format("equation '{}': term '{}' has {} label(s) for input {} of rank {} {}", eq_, terms[i], letters, i, r, shape_str(xs)));
      int64_t ne = r - letters;
      ell_rank = std::max(ell_rank, ne);
      for (int c : t) {
        if (c != -1) {
          labels[i].push_back(c);
          continue;
        }
        for (int64_t k = ne; k-- > 0;) labels[i].push_back(256 + static_cast<int>(k));
      }
      std::map<int, bool> seen;
      for (size_t d = 0; d < xs.size(); ++d) {
        int l = labels[i][d];
        int64_t dim = xs[d];
        auto it = size.find(l);
        if (it == size.end() || it->second == 1) size[l] = dim;
        else if (dim != it->second && !(l >= 256 && dim == 1))
          n.invalid(fmt::format("equation '{}': label '{}' has size {} in input {} {} but {} elsewhere", eq_, label_name(l), dim, i, shape_str(xs), it->second));
        if (l < 256 && seen[l] && dim != size[l])
          n.invalid(fmt::format("equation '{}': label '{}' repeats in input {} with different sizes", eq_, label_name(l), i));
        if (!seen[l]) ++count[l];
        seen[l] = true;
      }
    }
    std::vector<int> out;
    if (explicit_out) {
      bool ell = false;
      Term t = parse_term(n, rhs, &ell);
      for (int c : t) {
        if (c == -1) {
          for (int64_t k = ell_rank; k-- > 0;) out.push_back(256 + static_cast<int>(k));
          continue;
        }
        if (!size.count(c)) n.invalid(fmt::format("equation '{}': output label '{}' is in no input", eq_, label_name(c)));
        if (std::count(out.begin(), out.end(), c)) n.invalid(fmt::format("equation '{}': output label '{}' repeats", eq_, label_name(c)));
        out.push_back(c);
      }
    } else {
      for (int64_t k = ell_rank; k-- > 0;) out.push_back(256 + static_cast<int>(k));
      for (auto& [l, c] : count)
        if (l < 256 && c == 1) {
          int total = 0;  // appearances over all terms, repeats in one term included
          for (auto& lv : labels) total += static_cast<int>(std::count(lv.begin(), lv.end(), l));
          if (total == 1) out.push_back(l);
        }
    }
    // Number the labels: output ones first, in order, then the summed ones.
    std::map<int, size_t> id;
    g_.dims.clear();
    g_.out.clear();
    g_.summed.clear();
    for (int l : out) {
      id[l] = g_.dims.size();
      g_.out.push_back(g_.dims.size());
      g_.dims.push_back(size[l]);
    }
    for (auto& [l, sz] : size)
      if (!id.count(l)) {
        id[l] = g_.dims.size();
        g_.summed.push_back(g_.dims.size());
        g_.dims.push_back(sz);
      }
    for (size_t i = 0; i < terms.size(); ++i) {
      const Shape& xs = n.in(i)->shape;
      Shape st = strides_of(xs);
      g_.in_stride[i].assign(g_.dims.size(), 0);
      for (size_t d = 0; d < xs.size(); ++d)
        if (xs[d] != 1) g_.in_stride[i][id[labels[i][d]]] += st[d];
    }
    Shape os;
    for (size_t k : g_.out) os.push_back(g_.dims[k]);
    Shape ost = strides_of(os);
    g_.out_stride.assign(g_.dims.size(), 0);
    for (size_t k = 0; k < g_.out.size(); ++k) g_.out_stride[g_.out[k]] = ost[k];
    g_.equation = eq_;
    set_output(n, 0, n.in(0)->dtype, os);
  }

  static std::string label_name(int l) { return l < 256 ? std::string(1, static_cast<char>(l)) : "..."; }

  void eval(const Node&, const std::vector<const Tensor*>& in, std::vector<Tensor>& out) const override {
    Shape od, sd;
    for (size_t k : g_.out) od.push_back(g_.dims[k]);
    for (size_t k : g_.summed) sd.push_back(g_.dims[k]);
    int64_t no = numel(od), ns = numel(sd);
    for (int64_t o = 0; o < no; ++o) {
      Shape op = unravel(o, od);
      double acc = 0;
      for (int64_t s = 0; s < ns; ++s) {
        Shape sp = unravel(s, sd);
        double prod = 1;
        for (size_t i = 0; i < in.size(); ++i) {
          int64_t off = 0;
          for (size_t k = 0; k < g_.out.size(); ++k) off += op[k] * g_.in_stride[i][g_.out[k]];
          for (size_t k = 0; k < g_.summed.size(); ++k) off += sp[k] * g_.in_stride[i][g_.summed[k]];
          prod *= in[i]->get(off);
        }
        acc += prod;
      }
      out[0].set(o, acc);
    }
  }

  FusionKind kind() const override { return FusionKind::Opaque; }
  int64_t min_opset() const override { return 12; }
  const EinsumGeom& geom() const { return g_; }

 private:
  std::string eq_;
  EinsumGeom g_;
};

}  // namespace

const EinsumGeom& einsum_geom(const Node& n) { return op_as<Einsum>(n).geom(); }

void register_einsum(OpTable& t) {
  t["Einsum"] = [] { return std::unique_ptr<Op>(std::make_unique<Einsum>()); };
}

}  // namespace onnxc
