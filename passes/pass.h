// passes/pass.h — the graph pass interface and the small rewriter API passes share.
//
// A pass is a plain function `bool pass(Graph&, const PassOptions&)` in its own file that
// rewrites the graph in place and returns whether it changed anything. pipeline.cc lists
// them top to bottom. Rewrites match fully before they change anything; each has a
// before → after comment. Helpers here keep the graph's invariants: Graph::nodes in
// topological order, every Value with one producer, graph inputs/outputs plain.
// Walks are loops, never recursion (a 100,000-node chain is a valid model); a rewrite that
// may apply to every node batches its edits (erase_nodes, one substitution sweep) rather
// than calling the O(nodes) helpers once per node.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace onnxc {

class Backend;
struct MeasuredOp;

struct PassOptions {
  // The backend the graph is compiled for (codegen/backend.h): the layout pass asks it which
  // layouts a node can run in, memory planning which outputs may overwrite an input, and its
  // target sizes the channel blocks. Required by those two passes.
  const Backend* backend = nullptr;
  bool nchwc = true;          // --layout nchwc (default) or nchw
  int64_t channel_block = 16;  // NCHWc block (from the target or --channel-block)
  std::set<std::string> disabled;      // --disable-pass
  std::set<std::string> print_after;   // --print-after (or "all")
  bool verify_each = true;             // run verify_graph after every pass
  // --parallel (passes/schedule.h): fork-join regions where the schedule predicts a gain,
  // everywhere there are independent branches, or none. --threads: the threads planned for
  // (0 = the target's).
  TaskRegions parallel = TaskRegions::Auto;
  int threads = 0;
  // How the backend runs a fork-join region, for the schedule's cost model (passes/schedule.h).
  RegionForm region_form = RegionForm::OmpTasks;
  // --profile-data: measured one-thread times of the functions (passes/schedule.h), or null.
  const std::vector<MeasuredOp>* measured = nullptr;
  // Called after each pass that ran, with its name and whether it changed the graph.
  std::function<void(const std::string& pass, bool changed, const Graph& g)> after_pass;
};

// The pipeline's passes, in order (names accepted by --disable-pass / --print-after).
const std::vector<std::string>& pass_names();
// Whether pass p only rewrites ops (integer-ops, fold-constants, recognize, simplify): the
// passes a graph goes through before it is cut (split models, batch items), not again after.
bool rewrites_ops_only(const std::string& p);
// Runs the pipeline; returns the names of the passes that changed the graph.
std::vector<std::string> run_pipeline(Graph& g, const PassOptions& o);

// The passes (one file each).
bool integer_ops(Graph& g, const PassOptions& o);      // passes/integer_ops.cc
bool fold_constants(Graph& g, const PassOptions& o);   // passes/fold_constants.cc
bool recognize_ops(Graph& g, const PassOptions& o);    // passes/recognize.cc
bool simplify(Graph& g, const PassOptions& o);         // passes/simplify.cc
bool layout_nchwc(Graph& g, const PassOptions& o);     // passes/layout.cc
// The layout pass with `supports` answering instead of the backend (tests use it to place
// ops in NCHWc whose kernels do not have it yet; the reference eval works on any layout).
bool layout_nchwc_with(Graph& g, const PassOptions& o, const std::function<bool(const Node&, int64_t)>& supports);
bool pack_weights(Graph& g, const PassOptions& o);     // passes/pack_weights.cc
bool fuse_ops(Graph& g, const PassOptions& o);         // passes/fuse.cc
bool schedule_regions(Graph& g, const PassOptions& o);  // passes/schedule.cc
bool plan_memory(Graph& g, const PassOptions& o);      // passes/memory_plan.cc
// Recomputes every planned tensor's live range from the node order and the task regions
// and returns the first two tensors that share arena bytes while both live ("" if none):
// an independent check of the memory plan.
std::string check_memory_plan(const Graph& g);

// ---- Rewriter API (passes/rewrite.cc) ----

// Every use of `from` (node inputs, extra inputs, epilogue inputs, graph outputs) now reads
// `to`. A graph output keeps its name: when `from` is a graph output, `to` takes its place
// in Graph::outputs.
void replace_all_uses(Graph& g, Value* from, Value* to);
// False when `from` is a graph output and `to` cannot take its name (a graph input, another
// output, or a non-plain value); such rewrites must keep a copy instead.
bool can_replace(const Value* from, const Value* to);
// Number of nodes reading v plus one when it is a graph output.
size_t use_count(const Graph& g, const Value* v);
// Removes node n (its outputs must be unused) from Graph::nodes.
void erase_node(Graph& g, Node* n);
// Removes all of `nodes` in one sweep (erase_node one by one is quadratic on long graphs).
void erase_nodes(Graph& g, const std::set<const Node*>& nodes);
// Creates a node of `op_type` with the given inputs and fresh outputs, parses `attrs`,
// infers its outputs and inserts it before `before` (nullptr: at the end). The node name
// and its output names derive from `name`. Returns the node.
Node* insert_node(Graph& g, Node* before, const std::string& op_type, const std::string& name,
                  const std::vector<Value*>& inputs, size_t num_outputs = 1, std::map<std::string, Attr> attrs = {});
// A new constant value (an initializer) with the logical tensor t, stored in layout l.
Value* add_constant(Graph& g, const std::string& name, const Tensor& t, Layout l = Layout::plain());
// Removes nodes whose outputs nobody uses (graph outputs are used), then unused values.
bool remove_dead_nodes(Graph& g);
// Re-sorts Graph::nodes topologically (stable: keeps the current order where it can).
void topo_sort(Graph& g);

Attr attr_int(int64_t v);
Attr attr_ints(std::vector<int64_t> v);
Attr attr_float(double v);
Attr attr_string(std::string v);

}  // namespace onnxc
