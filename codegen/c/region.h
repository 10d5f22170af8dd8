// codegen/c/region.h — node functions inside the inference's one OpenMP parallel region.
//
// With compile-model --omp-region inference (the default), NAME_run opens one parallel region
// for all its node calls instead of a fork/join per parallel loop nest: the threads start
// once per inference, and between layers they meet at the barrier that ends each node. A
// kernel's body (codegen/c/kernels/, written for a fork/join of its own) becomes one of:
//
//   Shared  every statement at the top of the body (or in bare blocks `{ ... }` there, the
//           scopes of a kernel's constants) is a parallel loop nest (`omp parallel for`, or an
//           `omp parallel` block of `omp for nowait` copies), a declaration every thread may
//           make (CWriter::local, open_scope: a loop's constant, a table, a pointer into a
//           buffer) or a serial statement (CWriter::serial: zeroing the padding lanes after a
//           conv, an activation loop after a Gemm; it changes no local). The loops become
//           orphaned worksharing loops (`omp for`: same static split, an implied barrier at the
//           end), the block a plain block ending in `omp barrier`, each serial statement an
//           `omp single`; every thread of the region calls the function, each with its own
//           copies of the locals, which the declarations compute the same on every thread.
//           A body with no code at all (a Concat written in place by its inputs) is Shared too.
//   Serial  no parallel construct: one thread calls it (`omp single`, whose end is a barrier).
//   Alone   anything else (a statement at the top its kernel did not describe, a parallel loop
//           inside serial code): the body stays as written and the call runs between two
//           regions, with its own fork/join as before.
//
// What each statement is comes from the body's marks, never from its text: the parallel
// constructs' (codegen/c/nest.h: each nest's loops, bounds, collapse and clauses as data, at the
// line its pragma is on) and the statements' (StatementMark, said by the kernel that wrote
// them). The text is read for its layout only (codegen/c/emit.h: one statement or brace per
// line): where a statement's braces close, comments. A body that does not fit says Alone, with
// the reason, so a body the forms do not understand keeps its own regions.
//
// Thread groups (compile-model --task-form groups). Inside the one region, a fork-join region of the schedule (Graph::task_regions,
// independent branches side by side) runs each of its lists on a group of the team's threads:
// with more threads than lists, a list gets one thread plus a share of the others in
// proportion to its predicted time (onnxc_group_join below). A Shared body becomes a group
// body (group_body): every member of the group calls the function with its onnxc_group, each
// worksharing loop takes the member's static share of the iterations (a collapsed nest as one
// flattened range) and ends at the group's own barrier instead of the team's, a `single` runs
// on the group's first member. Only the threads of the group wait for each other.
//
// OpenMP tasks (compile-model --task-form omp-tasks, the default). Instead, one thread of the
// region makes every node of a fork-join region an OpenMP task, `depend` clauses on the
// tensors it reads from the region's other nodes, and the team runs them as they become ready
// (on the 2-core machine of bench/results/parallel.md within 2% of loop parallelism where
// thread groups lose 8-14%: a thread that has run out of branches helps with the loops of
// the others). A Shared body becomes a task body
// (task_body): each worksharing loop an `omp taskloop` of 8 tasks per thread (chunks any idle
// thread of the team takes; the loop waits for them), a `single` the task's own statement.
#pragma once
#include <string>

#include "codegen/c/nest.h"

namespace onnxc {

// Group: a body in group form (group_body), Task one in task form (task_body), inside a
// fork-join region; the emitter's, not region_body's.
enum class RegionRole { Shared, Serial, Alone, Group, Task };

struct RegionBody {
  RegionRole role = RegionRole::Alone;
  KernelBody body;     // Shared: the worksharing form, its marks at its lines; otherwise the body unchanged
  std::string reason;  // Alone: why the body keeps its own fork/join
};

RegionBody region_body(const KernelBody& body);

// The group form of a Shared body (region_body's output), calling the helpers of
// group_runtime_c through `onnxc_group* onnxc_g`; "" when it cannot be written, the reason in
// *reason (then the group's first member calls the function as written, and the group waits).
std::string group_body(const KernelBody& shared_body, std::string* reason = nullptr);

// The task form of a Shared body (region_body's output), for one OpenMP task to run with the
// team's help; "" when it cannot be written, the reason in *reason (then the task calls the
// function as written: its own parallel loops, nested in the region, run on the task's thread).
std::string task_body(const KernelBody& shared_body, std::string* reason = nullptr);

// The C the task bodies need (onnxc_taskloop_chunks): emitted once into a model's C file that
// runs a fork-join region as OpenMP tasks.
const char* task_runtime_c();

// The C the group bodies and the run need (types, onnxc_group_join, the split, the barrier):
// emitted once into a model's C file that has a fork-join region in its one parallel region.
const char* group_runtime_c();

}  // namespace onnxc
