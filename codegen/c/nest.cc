// codegen/c/nest.cc — parallel constructs and statements as data (see nest.h).
#include "codegen/c/nest.h"

#include <algorithm>

namespace onnxc {

std::string NestLoop::header() const {
  const std::string& v = var;
  return step == 1 ? fmt::format("for (int64_t {0} = {1}; {0} < {2}; ++{0})", v, lo, end)
                   : fmt::format("for (int64_t {0} = {1}; {0} < {2}; {0} += {3})", v, lo, end, step);
}

int64_t ParallelNest::iterations() const {
  int64_t n = 1;
  for (const NestLoop& l : loops) n *= l.trips();
  return n;
}

std::string ParallelNest::pragma() const {
  std::string p = form == NestForm::Fork ? "omp parallel for" : "omp for";
  if (simd) p += " simd";
  if (loops.size() > 1) p += fmt::format(" collapse({})", loops.size());
  if (schedule_static) p += " schedule(static)";
  if (form == NestForm::SharedNowait) p += " nowait";
  return "ONNXC_PRAGMA(" + p + ")";
}

std::string describe_tasks(const std::vector<NestLoop>& loops, bool parallel) {
  std::string s;
  int64_t n = 1;
  for (const NestLoop& l : loops) {
    if (l.trips() == 1) continue;
    s += fmt::format("{}{} {}", s.empty() ? "" : " x ", l.trips(), l.var);
    n *= l.trips();
  }
  if (s.empty()) return "one task";
  return fmt::format("{} tasks ({}), {}", n, s, parallel ? "parallel" : "serial");
}

int64_t parallel_iterations(const std::vector<ParallelMark>& marks) {
  int64_t most = 0;
  for (const ParallelMark& m : marks)
    if (m.kind == MarkKind::Nest) most = std::max(most, m.nest.iterations());
  return marks.empty() || most == 0 ? 1 : most;
}

void CWriter::line(const std::string& s) {
  // Every parallel construct goes through open_nest/open_parallel_block/single_nowait; `omp
  // simd` is a hint on a serial loop.
  if (kb_.text_construct.empty()) {
    const size_t p = s.find("ONNXC_PRAGMA(omp ");
    if (p != std::string::npos && s.compare(p, 21, "ONNXC_PRAGMA(omp simd") != 0) kb_.text_construct = s.substr(p);
  }
  if (!s.empty() && s[0] == '}') --indent_;
  kb_.text.append(static_cast<size_t>(indent_) * 2, ' ');
  kb_.text += s;
  kb_.text += '\n';
  lines_ += 1 + static_cast<size_t>(std::count(s.begin(), s.end(), '\n'));
  if (!s.empty() && s.back() == '{') ++indent_;
}

void CWriter::mark(MarkKind k, const ParallelNest& n) { kb_.marks.push_back({lines_, k, n}); }

void CWriter::open_nest(const ParallelNest& n, const std::string& inline_body) {
  mark(MarkKind::Nest, n);
  const std::string text = kb_.text_construct;
  line(n.pragma());
  kb_.text_construct = text;
  for (size_t j = 0; j < n.loops.size(); ++j)
    line(n.loops[j].header() + (j + 1 == n.loops.size() && !inline_body.empty() ? " " + inline_body : " {"));
}

void CWriter::open_parallel_block() {
  mark(MarkKind::Block);
  const std::string text = kb_.text_construct;
  line("ONNXC_PRAGMA(omp parallel)");
  kb_.text_construct = text;
  line("{");
}

void CWriter::single_nowait() {
  mark(MarkKind::SingleNowait);
  const std::string text = kb_.text_construct;
  line("ONNXC_PRAGMA(omp single nowait)");
  kb_.text_construct = text;
}

void CWriter::open_scope(const std::string& var, int64_t value) {
  line("{");
  local("const int64_t {} = {};", var, value);
}

std::string CWriter::fresh(const std::string& base) { return base + std::to_string(fresh_++); }

}  // namespace onnxc
