// codegen/c/nest.h — a C kernel's parallel constructs and top-level statements as data, beside
// the C text it writes.
//
// A kernel writes its function body line by line (CWriter, below; CEmit in emit.h adds the
// node). Its parallel constructs do not go in as text: open_nest() writes a parallel loop nest
// (the pragma and the loop headers) from a ParallelNest — loop variables, constant bounds and
// steps, the collapsed loops, simd and schedule — and records it, with the line it starts on,
// as a ParallelMark; open_parallel_block() and single_nowait() do the same for a kernel's own
// `omp parallel` block of copies. What reads a body afterwards reads the marks, never the
// pragma text: the one parallel region's worksharing, group and task forms
// (codegen/c/region.h) and the schedule's cost model (parallel_iterations, the pieces a
// node's work splits into). A parallel construct written as text is noted
// (KernelBody::text_construct) and keeps the function's own fork/join, with that reason.
//
// The statements beside the nests are described the same way (StatementMark): local() writes
// a declaration every thread of a region may make, open_scope() a loop of one trip as a block
// with its constant, serial() says the next statement may run on one thread for all. The
// region's forms read those marks to decide how a body is shared; a statement at the top of a
// body that carries none keeps the body's own fork/join, naming it.
//
// `omp simd` stays a line of text: a vector hint on a serial loop, which the forms keep as
// written.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

namespace onnxc {

// One loop of a nest: for (int64_t var = lo; var < end; var += step), constant bounds.
struct NestLoop {
  std::string var;
  int64_t end = 0, step = 1, lo = 0;
  int64_t trips() const { return end > lo && step > 0 ? (end - lo + step - 1) / step : 0; }
  // "for (int64_t v = 0; v < 64; ++v)" ("v += 16" with a step), without what follows.
  std::string header() const;
};

// How a nest's iterations are shared among the threads.
enum class NestForm {
  Fork,          // `omp parallel for`: a fork/join of its own (as a kernel writes it)
  Shared,        // `omp for`: the team's threads share it, a barrier at its end (the one region's form)
  SharedNowait,  // `omp for nowait`: no barrier (copies inside a kernel's `omp parallel` block)
};

struct ParallelNest {
  std::vector<NestLoop> loops;  // outermost first; more than one are collapsed
  bool simd = false;            // one loop that is also the vector loop (`omp parallel for simd`)
  bool schedule_static = false;
  NestForm form = NestForm::Fork;
  // The pieces its work splits into: the product of the loops' trips.
  int64_t iterations() const;
  // "ONNXC_PRAGMA(omp parallel for collapse(2) schedule(static))" in its form.
  std::string pragma() const;
};

// A parallel construct of a body, at line `line` (from 0) of its text.
enum class MarkKind {
  Nest,          // the pragma of `nest`; its loops' headers are the next nest.loops.size() lines
  Block,         // `omp parallel`, followed by the line `{` of its block
  Barrier,       // `omp barrier` (the one region's, at the end of a shared block)
  Single,        // `omp single`: the next statement on one thread, then a barrier
  SingleNowait,  // `omp single nowait`: the same without the barrier
};

struct ParallelMark {
  size_t line = 0;
  MarkKind kind = MarkKind::Nest;
  ParallelNest nest;  // MarkKind::Nest
};

// What a statement of a body is, said by the kernel that wrote it (CWriter::local, serial).
enum class StatementKind {
  // A declaration every thread of a parallel region may make: its initializer calls nothing and
  // reads only constants and the function's parameters, so each thread computes the same value
  // (a loop's constant, a table, a pointer into a buffer). Its lines: until its braces close.
  Local,
  // A statement one thread may run for all (its lines: until its braces close): it changes no
  // local of the function (each thread of a region has its own) and leaves the function only
  // at its end.
  Serial,
};

struct StatementMark {
  size_t line = 0;  // where it starts, from 0
  StatementKind kind = StatementKind::Local;
};

// A function body: its text (one statement or brace per line, two spaces per level) and marks.
struct KernelBody {
  std::string text;
  std::vector<ParallelMark> marks;  // in line order
  // The first parallel pragma written as text rather than through CWriter ("" when none).
  std::string text_construct;
  std::vector<StatementMark> statements;  // in line order
};

// "224 tasks (4 grp x 56 oh), parallel": the task loops of a plan, as --dump-ir prints them.
std::string describe_tasks(const std::vector<NestLoop>& loops, bool parallel);

// The widest nest's iterations: the pieces a body's work can be split into; 1 with no parallel
// nest. The schedule's cost model reads it (Backend::parallel_items, passes/schedule.h).
int64_t parallel_iterations(const std::vector<ParallelMark>& marks);

class CWriter {
 public:
  // One line of C: e("for (int64_t i = 0; i < {}; ++i) {{", n); ... e("}}"). Lines ending in
  // '{' indent what follows; lines starting with '}' dedent.
  template <class... A>
  void operator()(fmt::format_string<A...> f, A&&... a) {
    line(fmt::format(f, std::forward<A>(a)...));
  }
  void line(const std::string& s);
  // The nest's pragma and its loops' headers, each opening a block (the innermost ending in
  // ` ` + inline_body instead, when given: a one-line loop). One `}` per loop closes them
  // (none for a one-line loop).
  void open_nest(const ParallelNest& n, const std::string& inline_body = "");
  // `omp parallel` and `{`: a block every thread of a fork runs, its nests SharedNowait
  // (open_nest); one `}` closes it.
  void open_parallel_block();
  // `omp single nowait`: the next statement runs on one thread of the block.
  void single_nowait();
  // A declaration every thread of a region may make (StatementKind::Local):
  // e.local("static const float tab[{}] = {{", n) ... e("}};").
  template <class... A>
  void local(fmt::format_string<A...> f, A&&... a) {
    statement(StatementKind::Local);
    line(fmt::format(f, std::forward<A>(a)...));
  }
  // A loop of one trip as a block: `{` and `const int64_t var = value;` (a Local). One `}`
  // closes it.
  void open_scope(const std::string& var, int64_t value);
  // The next statement may run on one thread for all (StatementKind::Serial): it changes no
  // local of the function.
  void serial() { statement(StatementKind::Serial); }
  std::string fresh(const std::string& base);  // a new local identifier
  const std::string& body() const { return kb_.text; }
  const KernelBody& kernel_body() const { return kb_; }

 private:
  void mark(MarkKind k, const ParallelNest& n = {});
  void statement(StatementKind k) { kb_.statements.push_back({lines_, k}); }
  KernelBody kb_;
  size_t lines_ = 0;
  int indent_ = 1;
  int fresh_ = 0;
};

}  // namespace onnxc
