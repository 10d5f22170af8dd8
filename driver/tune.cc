// driver/tune.cc — compile-model --parallel tune (see tune.h).
#include "driver/tune.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "driver/command.h"
#include "driver/compile.h"
#include "ir/graph.h"

namespace onnxc::driver {

namespace fs = std::filesystem;

int compile_tuned(Options& o, const Target& target) {
  auto say = [&](const std::string& s) { if (!o.quiet) fmt::print("{}\n", s); };
  const std::string dir = o.outdir + "/.tune";
  std::error_code ec;
  fs::remove_all(dir, ec);
  struct RemoveDir {  // the candidates go, whatever way this returns
    std::string dir;
    ~RemoveDir() { std::error_code e; fs::remove_all(dir, e); }
  } remove_candidates{dir};
  struct Candidate {
    Parallel mode;
    std::string outdir, note;
    bool built = false;
    std::vector<double> medians;  // ms, one per round
  };
  std::vector<Candidate> cands;
  Timer t_build;
  for (Parallel mode : {Parallel::Loop, Parallel::Task, Parallel::Batch}) {
    Candidate c;
    c.mode = mode;
    c.outdir = dir + "/" + flag_name(mode);
    Options co = o;
    co.parallel = mode;
    co.outdir = c.outdir;
    co.emit = Emit::Exe;
    co.quiet = true;
    co.verify = co.dump_ir = false;
    co.print_after.clear();
    co.driver_object = dir + "/onnxc_main.o";
    Built b;
    co.built = &b;
    if (c.mode == Parallel::Batch && target.threads < 2) {
      c.note = "one thread";
    } else {
      try {
        int rc = compile(co);
        if (rc != kOk) return rc;  // compile already said why: the same fault would hit every build
        c.built = true;
        if (c.mode == Parallel::Task && b.regions == 0) c.built = false, c.note = "no fork-join region (the loop build's C)";
      } catch (const CompileError& e) {
        if (c.mode != Parallel::Batch || e.kind() != CompileError::Kind::Unsupported) throw;
        c.note = e.what();
        const std::string apart = "cannot run apart: ";
        if (auto p = c.note.find(apart); p != std::string::npos) c.note = "its items cannot run apart: " + c.note.substr(p + apart.size());
      }
    }
    cands.push_back(c);
  }
  size_t timed = 0;
  for (auto& c : cands) timed += c.built;
  say(fmt::format("tune: built {} candidate{} ({:.2f} s); timing at {} thread{}, {} rounds", timed, timed == 1 ? "" : "s", t_build.seconds(),
                  target.threads, target.threads == 1 ? "" : "s", o.tune_rounds));
  // One timed --bench of a build; its median in ms, or a failure naming the run.
  auto bench = [&](const Candidate& c, int runs) {
    std::string out;
    const std::string cmd = fmt::format("{} --quiet --bench {} --threads {}", quote(c.outdir + "/" + o.name), runs, target.threads);
    int rc = run_command(cmd, &out);
    double ms = 0;
    const auto at = out.find("latency: median ");
    if (rc != 0 || at == std::string::npos || std::sscanf(out.c_str() + at, "latency: median %lf", &ms) != 1)
      throw InternalError(fmt::format("--parallel tune: the --parallel {} build failed to run (exit {}): {}", flag_name(c.mode), rc, out));
    // Anything else it printed (a sanitizer's warning, say) is passed on.
    std::string rest = out.substr(0, at) + out.substr(std::min(out.size(), out.find('\n', at) + 1));
    if (rest.find_first_not_of(" \n") != std::string::npos) fmt::print(stderr, "tune: the --parallel {} build printed:\n{}", flag_name(c.mode), rest);
    return ms;
  };
  if (timed > 1) {
    std::map<Parallel, int> runs;
    for (auto& c : cands)
      if (c.built) runs[c.mode] = std::clamp(static_cast<int>(500.0 / std::max(1e-3, bench(c, 3))), 3, 1000);
    for (int r = 0; r < o.tune_rounds; ++r)
      for (auto& c : cands)
        if (c.built) c.medians.push_back(bench(c, runs[c.mode]));
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
  };
  Parallel pick = Parallel::Loop;
  double best = 1.0;
  for (auto& c : cands) {
    if (!c.built) {
      say(fmt::format("tune: --parallel {:<5}  not built: {}", flag_name(c.mode), c.note));
      continue;
    }
    if (timed < 2) continue;
    std::vector<double> ratios;
    for (size_t r = 0; r < c.medians.size(); ++r) ratios.push_back(c.medians[r] / cands[0].medians[r]);
    const double ratio = median(ratios);
    say(fmt::format("tune: --parallel {:<5}  {:.3f} ms{}", flag_name(c.mode), median(c.medians),
                    c.mode == Parallel::Loop ? "" : fmt::format("  ({:.3f} of loop)", ratio)));
    if (c.mode != Parallel::Loop && ratio < 1.0 - kTuneMargin && ratio < best) pick = c.mode, best = ratio;
  }
  say(timed < 2 ? "tune: one candidate: --parallel loop"
                : fmt::format("tune: --parallel {} ({})", flag_name(pick),
                              pick == Parallel::Loop ? fmt::format("no other build was {:.0f}% faster", 100 * kTuneMargin)
                                             : fmt::format("{:.3f} of loop's time", best)));
  // The final build: an executable takes the winner's binary where its C is the same (the
  // candidates' folder goes when this returns).
  o.parallel = pick;
  o.reuse_dir = dir + "/" + flag_name(pick);
  return compile(o);
}

}  // namespace onnxc::driver
