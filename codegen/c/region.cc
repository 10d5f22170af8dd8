// codegen/c/region.cc — node functions inside the inference's one parallel region (see region.h).
#include "codegen/c/region.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace onnxc {
namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// The line without its comments; *in_comment carries an unterminated /* to the next line.
std::string code_of(const std::string& line, bool* in_comment) {
  std::string r;
  for (size_t i = 0; i < line.size();) {
    if (*in_comment) {
      size_t e = line.find("*/", i);
      if (e == std::string::npos) return trim(r);
      *in_comment = false;
      i = e + 2;
    } else if (line.compare(i, 2, "/*") == 0) {
      *in_comment = true;
      i += 2;
    } else if (line.compare(i, 2, "//") == 0) {
      break;
    } else {
      r += line[i++];
    }
  }
  return trim(r);
}

// A body's lines, each with its code (comments removed, code_of); *in_comment says whether the
// body ends inside a comment.
struct Line {
  std::string text, code;
};

std::vector<Line> body_lines(const std::string& body, bool* in_comment) {
  std::vector<Line> lines;
  *in_comment = false;
  for (size_t p = 0; p < body.size();) {
    size_t e = body.find('\n', p);
    if (e == std::string::npos) e = body.size();
    lines.push_back({body.substr(p, e - p), ""});
    lines.back().code = code_of(lines.back().text, in_comment);
    p = e + 1;
  }
  return lines;
}

// x as an operand: in parentheses unless it is a name or a number.
std::string operand(const std::string& x) {
  const bool word = !x.empty() && std::all_of(x.begin(), x.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
  return word ? x : "(" + x + ")";
}

// The marks of a body by the line they are on.
std::map<size_t, const ParallelMark*> marks_by_line(const KernelBody& kb) {
  std::map<size_t, const ParallelMark*> at;
  for (const ParallelMark& m : kb.marks) at[m.line] = &m;
  return at;
}

const ParallelMark* mark_at(const std::map<size_t, const ParallelMark*>& at, size_t line) {
  auto it = at.find(line);
  return it == at.end() ? nullptr : it->second;
}

// What the kernel said the statement starting on each line is (CWriter::local, serial).
std::map<size_t, StatementKind> statements_by_line(const KernelBody& kb) {
  std::map<size_t, StatementKind> at;
  for (const StatementMark& s : kb.statements) at[s.line] = s.kind;
  return at;
}

bool is_simd(const std::string& code) { return code.starts_with("ONNXC_PRAGMA(omp simd"); }

// Lines joined as a body: each ends in '\n' when `text` did.
std::string joined(const std::vector<std::string>& lines, const std::string& text) {
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

}  // namespace

RegionBody region_body(const KernelBody& kb) {
  RegionBody r;
  r.body = kb;
  auto alone = [&](const std::string& why) { return RegionBody{RegionRole::Alone, kb, why}; };
  if (!kb.text_construct.empty()) return alone("a parallel construct written as text: " + kb.text_construct);
  bool in_comment = false;
  const std::vector<Line> lines = body_lines(kb.text, &in_comment);
  const bool empty = std::all_of(lines.begin(), lines.end(), [](const Line& l) { return l.code.empty(); });
  if (empty) {  // nothing to run (a Concat whose inputs were written in place): every thread, no barrier needed
    r.role = RegionRole::Shared;
    return r;
  }
  if (kb.marks.empty()) {
    r.role = RegionRole::Serial;
    return r;
  }
  const auto at = marks_by_line(kb);
  const auto said = statements_by_line(kb);
  enum class State { Top, AfterFor, AfterBlock, AfterSimd, InStatement } state = State::Top;
  enum class Kind { Declaration, Loop, Block, Serial } kind = Kind::Declaration;
  long depth = 0;  // of braces within the statement
  long bare = 0;   // bare blocks open around it
  std::vector<std::string> out, stmt_lines;
  std::vector<ParallelMark> marks;
  std::string indent;
  auto put_mark = [&](ParallelMark m) {
    m.line = out.size();
    marks.push_back(std::move(m));
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i].text;
    const std::string& code = lines[i].code;
    const ParallelMark* m = mark_at(at, i);
    if (state == State::Top) {
      if (code.empty() || code == "{" || code == "}") {  // a bare block: a scope for declarations
        bare += code == "{" ? 1 : code == "}" ? -1 : 0;
        if (bare < 0) return alone("a closing brace without its block");
        out.push_back(line);
        continue;
      }
      indent = line.substr(0, line.find_first_not_of(' '));
      stmt_lines.clear();
      if (m && m->kind == MarkKind::Nest && m->nest.form == NestForm::Fork) {
        ParallelMark shared = *m;
        shared.nest.form = NestForm::Shared;  // an orphaned `omp for`: the same static split, a barrier at its end
        put_mark(shared);
        out.push_back(indent + shared.nest.pragma());
        state = State::AfterFor;
        continue;
      }
      if (m && m->kind == MarkKind::Block) {
        state = State::AfterBlock;  // the pragma line goes; the block ends in a barrier
        continue;
      }
      if (m) return alone("a worksharing construct outside a parallel block");
      const auto s = said.find(i);
      if (s == said.end()) return alone("a statement its kernel did not describe as a declaration or a serial statement: " + code);
      state = State::InStatement;
      kind = s->second == StatementKind::Local ? Kind::Declaration : Kind::Serial;
      if (kind == Kind::Serial && is_simd(code)) {  // a serial vector loop
        stmt_lines.push_back("  " + line);
        state = State::AfterSimd;
        continue;
      }
    } else if (state == State::AfterFor) {
      if (!code.starts_with("for (")) return alone("a parallel nest without its loop");
      kind = Kind::Loop;
      state = State::InStatement;
    } else if (state == State::AfterBlock) {
      if (code != "{") return alone("a parallel block without its braces");
      kind = Kind::Block;
      state = State::InStatement;
    } else if (state == State::AfterSimd) {
      if (!code.starts_with("for (")) return alone("a vector hint without its loop");
      state = State::InStatement;
    } else if ((kind == Kind::Declaration || kind == Kind::Serial) && m) {
      return alone("a parallel construct inside a serial statement");
    }
    if (kind == Kind::Serial) stmt_lines.push_back((line.empty() || line[0] == '#' ? "" : "  ") + line);
    for (char c : code) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (depth < 0) return alone("braces that do not balance");
    const bool ends = depth == 0 && !code.empty() && (code.back() == ';' || code.back() == '}');
    if (kind == Kind::Block && ends) {
      if (code != "}") return alone("a parallel block that does not end on its own line");
      put_mark({0, MarkKind::Barrier, {}});
      out.push_back(indent + "  ONNXC_PRAGMA(omp barrier)");
    }
    if (kind != Kind::Serial) {
      if (m) put_mark(*m);  // a construct of a parallel block: its copies, a single
      out.push_back(line);
    }
    if (state == State::InStatement && ends) {
      if (kind == Kind::Serial) {
        put_mark({0, MarkKind::Single, {}});
        out.push_back(indent + "ONNXC_PRAGMA(omp single)");
        out.push_back(indent + "{");
        out.insert(out.end(), stmt_lines.begin(), stmt_lines.end());
        out.push_back(indent + "}");
      }
      state = State::Top;
    }
  }
  if (state != State::Top || depth != 0 || bare != 0 || in_comment) return alone("a statement, block or comment left open");
  r.role = RegionRole::Shared;
  r.body = {joined(out, kb.text), marks, "", {}};
  return r;
}

namespace {

// What the group and task forms rewrite: a Shared body's lines and marks. A body that reads
// the team's thread numbers or count (omp_get_thread_num...) has no such form: a group or a
// task is not the team.
struct FormInput {
  std::vector<Line> lines;
  bool in_comment = false;
  std::map<size_t, const ParallelMark*> at;
  std::string refusal;  // why neither form can be written, "" when they can be tried
};

// No form: "", the reason in *reason.
std::string refuse(std::string* reason, const std::string& why) {
  if (reason) *reason = why;
  return "";
}

FormInput form_input(const KernelBody& shared) {
  FormInput f;
  if (shared.text.find("omp_") != std::string::npos) f.refusal = "the body reads the team's thread numbers or count";
  f.lines = body_lines(shared.text, &f.in_comment);
  f.at = marks_by_line(shared);
  return f;
}

}  // namespace

std::string group_body(const KernelBody& shared, std::string* reason) {
  auto fail = [&](const std::string& why) { return refuse(reason, why); };
  const FormInput in = form_input(shared);
  if (!in.refusal.empty()) return fail(in.refusal);
  const std::vector<Line>& lines = in.lines;
  const bool in_comment = in.in_comment;
  const auto& at = in.at;
  std::vector<std::string> out;
  // The statement after a worksharing construct: when it ends (braces balanced, the line ends
  // in `;` or `}`), the group's barrier unless the construct said nowait.
  bool pending = false, pending_barrier = false;
  long depth = 0;
  std::string pending_indent;
  auto follow = [&](const std::string& code) {  // a line of the pending statement
    for (char c : code) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (depth < 0) return false;
    if (depth == 0 && !code.empty() && (code.back() == ';' || code.back() == '}')) {
      if (pending_barrier) out.push_back(pending_indent + "onnxc_group_barrier(onnxc_g);");
      pending = false;
    }
    return true;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i].text;
    const std::string& code = lines[i].code;
    const std::string indent = line.substr(0, line.find_first_not_of(' '));
    const ParallelMark* m = mark_at(at, i);
    if (!m) {
      out.push_back(line);
      if (pending && !is_simd(code) && !follow(code)) return fail("braces that do not balance");
      continue;
    }
    if (pending) return fail("a parallel construct inside another's statement");
    if (m->kind == MarkKind::Barrier) {
      out.push_back(indent + "onnxc_group_barrier(onnxc_g);");
      continue;
    }
    if (m->kind == MarkKind::Single || m->kind == MarkKind::SingleNowait) {
      out.push_back(indent + "if (onnxc_g->rank == 0)");
      pending = true;
      pending_barrier = m->kind == MarkKind::Single;
      pending_indent = indent;
      depth = 0;
      continue;
    }
    if (m->kind != MarkKind::Nest) return fail("a parallel block inside the region's form");
    const ParallelNest& nest = m->nest;
    const size_t k = nest.loops.size();
    if (k < 1 || i + k >= lines.size()) return fail("a parallel nest without its loops");
    if (nest.simd && k > 1) return fail("a collapsed nest that is also a vector loop");
    std::vector<std::string> indents(k), rests(k), n(k);
    for (size_t j = 0; j < k; ++j) {
      const std::string& hl = lines[i + 1 + j].text;
      const size_t first = hl.find_first_not_of(' ');
      const std::string header = nest.loops[j].header();
      if (first == std::string::npos || hl.compare(first, header.size(), header) != 0) return fail("a nest's loop header out of place");
      indents[j] = hl.substr(0, first);
      rests[j] = hl.substr(first + header.size());
      if (k > 1 && rests[j] != " {") return fail("a collapsed nest whose loops do not each open a block");
      n[j] = std::to_string(nest.loops[j].trips());
    }
    auto start = [](const NestLoop& l, const std::string& idx) {  // lo + step * idx
      return (l.lo == 0 ? "" : operand(std::to_string(l.lo)) + " + ") + (l.step == 1 ? idx : operand(std::to_string(l.step)) + " * " + operand(idx));
    };
    if (nest.simd) out.push_back(indent + "ONNXC_PRAGMA(omp simd)");
    if (k == 1) {
      const NestLoop& l = nest.loops[0];
      out.push_back(indents[0] + "for (int64_t " + l.var + " = " + start(l, "onnxc_group_lo(onnxc_g, " + n[0] + ")") + ", onnxc_end = " +
                    start(l, "onnxc_group_hi(onnxc_g, " + n[0] + ")") + "; " + l.var + " < onnxc_end; " +
                    (l.step == 1 ? "++" + l.var : l.var + " += " + std::to_string(l.step)) + ")" + rests[0]);
    } else {
      // One flattened range; each loop's variable from the flat index, outermost slowest.
      std::string all = n[0];
      for (size_t j = 1; j < k; ++j) all += " * " + n[j];
      out.push_back(indents[0] + "for (int64_t onnxc_i = onnxc_group_lo(onnxc_g, " + all + "), onnxc_end = onnxc_group_hi(onnxc_g, " + all +
                    "); onnxc_i < onnxc_end; ++onnxc_i) {");
      for (size_t j = 0; j < k; ++j) {
        std::string inner;
        for (size_t q = j + 1; q < k; ++q) inner += (inner.empty() ? "" : " * ") + n[q];
        std::string idx = inner.empty() ? "onnxc_i" : "onnxc_i / " + operand(inner);
        if (j > 0) idx = operand(idx) + " % " + n[j];
        if (j > 0) out.push_back(indents[j] + "{");
        out.push_back(indents[j] + "  const int64_t " + nest.loops[j].var + " = " + start(nest.loops[j], idx) + ";");
      }
    }
    pending = true;
    pending_barrier = nest.form != NestForm::SharedNowait;
    pending_indent = indent;
    depth = static_cast<long>(k) - 1;
    const std::string last = trim(rests[k - 1]);
    if (!follow(last.empty() ? ")" : last)) return fail("braces that do not balance");
    i += k;
  }
  if (pending || in_comment) return fail("a statement or comment left open");
  return joined(out, shared.text);
}

std::string task_body(const KernelBody& shared, std::string* reason) {
  auto fail = [&](const std::string& why) { return refuse(reason, why); };
  const FormInput in = form_input(shared);
  if (!in.refusal.empty()) return fail(in.refusal);
  const std::vector<Line>& lines = in.lines;
  const auto& at = in.at;
  std::vector<std::string> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i].text;
    const ParallelMark* m = mark_at(at, i);
    if (!m) {
      out.push_back(line);
      continue;
    }
    // One task runs the body: a barrier waits for nothing (every taskloop below has waited for
    // its own tasks), a single is the task itself.
    if (m->kind == MarkKind::Barrier || m->kind == MarkKind::Single || m->kind == MarkKind::SingleNowait) continue;
    if (m->kind != MarkKind::Nest) return fail("a parallel block inside the region's form");
    // A taskloop keeps simd and collapse; it waits for its tasks (its implicit taskgroup) where
    // the loop had a barrier, and after a nowait loop too.
    const ParallelNest& nest = m->nest;
    const std::string indent = line.substr(0, line.find_first_not_of(' '));
    out.push_back(indent + "ONNXC_PRAGMA(omp taskloop" + (nest.simd ? " simd" : "") +
                  (nest.loops.size() > 1 ? " collapse(" + std::to_string(nest.loops.size()) + ")" : "") + " num_tasks(onnxc_taskloop_chunks()))");
  }
  if (in.in_comment) return fail("a comment left open");
  return joined(out, shared.text);
}

const char* task_runtime_c() {
  return R"(/* OpenMP tasks (codegen/c/region.h): the tasks of one taskloop, so that a thread that has run out of ready
 * tasks takes part of the loops of the others: 8 per thread in a team of up to 2 threads, 2 per thread up to 4,
 * one per thread above (passes/schedule.cc predicts with the same counts). Every chunk goes through the
 * runtime's task queue, which the team shares: on a 16-core Xeon, googlenet's regions with 8 chunks per thread
 * took 1.3x (8 threads) and 1.9x (16 threads) their time with one; on a 2-core EPYC one per thread was 6% slower than 8. */
#ifndef ONNXC_RT_FN /* onnxc_runtime.h's: static, and no warning when a model does not use it */
#define ONNXC_RT_FN static
#endif
ONNXC_RT_FN int onnxc_taskloop_chunks(void) {
#ifdef _OPENMP
  const int t = omp_get_num_threads();
  return t * (t <= 2 ? 8 : t <= 4 ? 2 : 1);
#else
  return 1;
#endif
}

)";
}

const char* group_runtime_c() {
  return R"(/* Thread groups (codegen/c/region.h): a fork-join region inside the run's parallel region runs each of its
 * lists on a group of the team's threads, which split the list's loops among them and wait only for each
 * other, at the group's barrier. */
#include <sched.h>
#ifndef ONNXC_RT_FN /* onnxc_runtime.h's: static, and no warning when a model does not use it */
#define ONNXC_RT_FN static
#endif
typedef struct {
  atomic_int arrived; /* members at the barrier of the current phase */
  atomic_int phase;   /* barriers passed */
} onnxc_group_sync;
typedef struct {
  onnxc_group_sync* sync;
  int rank, size, phase;
} onnxc_group;

ONNXC_RT_FN void onnxc_group_sync_init(onnxc_group_sync* s, int n) {
  for (int i = 0; i < n; ++i) {
    atomic_init(&s[i].arrived, 0);
    atomic_init(&s[i].phase, 0);
  }
}

/* Whether this thread runs list `list` of a region of `lists` lists (their predicted times at one thread
 * in `cost`), and as which member of the list's group. With T threads and T <= lists, list l runs on
 * thread l mod T alone. Otherwise list l gets one thread plus a share of the other T - lists in
 * proportion to its time; a group is a run of consecutive thread numbers. */
ONNXC_RT_FN int onnxc_group_join(onnxc_group* g, onnxc_group_sync* syncs, int lists, const int64_t* cost, int list) {
#ifdef _OPENMP
  const int threads = omp_get_num_threads(), t = omp_get_thread_num();
#else
  const int threads = 1, t = 0;
#endif
  g->sync = &syncs[list];
  g->phase = 0;
  g->rank = 0;
  g->size = 1;
  if (threads <= lists) return list % threads == t;
  int64_t total = 0, before = 0;
  for (int l = 0; l < lists; ++l) {
    total += cost[l] > 0 ? cost[l] : 1;
    if (l < list) before = total;
  }
  const int64_t extra = threads - lists, mine = cost[list] > 0 ? cost[list] : 1;
  const int first = list + (int)(extra * before / total), end = list + 1 + (int)(extra * (before + mine) / total);
  if (t < first || t >= end) return 0;
  g->rank = t - first;
  g->size = end - first;
  return 1;
}

/* The member's share of n iterations: the static split of `omp for`, among the group. */
ONNXC_RT_FN inline int64_t onnxc_group_lo(const onnxc_group* g, int64_t n) {
  const int64_t q = n / g->size, r = n % g->size;
  return g->rank * q + (g->rank < r ? g->rank : r);
}
ONNXC_RT_FN inline int64_t onnxc_group_hi(const onnxc_group* g, int64_t n) {
  return onnxc_group_lo(g, n) + n / g->size + (g->rank < n % g->size ? 1 : 0);
}

/* The group's barrier: the last member to arrive opens the next phase; the others spin, then yield. */
ONNXC_RT_FN void onnxc_group_barrier(onnxc_group* g) {
  if (g->size <= 1) return;
  const int next = ++g->phase;
  if (atomic_fetch_add(&g->sync->arrived, 1) == g->size - 1) {
    atomic_store(&g->sync->arrived, 0);
    atomic_store(&g->sync->phase, next);
    return;
  }
  for (unsigned spins = 0; atomic_load(&g->sync->phase) != next; ++spins)
    if (spins >= 4000) sched_yield();
}

)";
}

}  // namespace onnxc
