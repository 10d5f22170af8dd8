// driver/options.cc — the flags' combinations compile-model refuses (see options.h).
#include "driver/options.h"

#include <fmt/format.h>

#include <algorithm>

#include "passes/pass.h"

namespace onnxc::driver {

std::string check_options(Options& o, bool task_form_given) {
  for (auto* list : {&o.print_after, &o.disable_pass})
    for (auto& p : *list)
      if (p != "all" && p != "import" && std::find(pass_names().begin(), pass_names().end(), p) == pass_names().end()) {
        std::string names;
        for (auto& q : pass_names()) names += (names.empty() ? "" : ", ") + q;
        return fmt::format("unknown pass '{}' (passes: {})", p, names);
      }
  if (!o.run_with.empty() && !o.verify)
    return "--run-with is for --verify";
  if (task_form_given && o.omp_region == "op") {
    return "--task-form is for the one parallel region of --omp-region inference; --omp-region op runs a fork-join region as "
           "`omp parallel sections`";
  }
  if (!o.gpu_precision.empty() && o.device != "cuda")
    return "--gpu-precision is for --device cuda";
  if (!o.gpu_libs.empty()) {
    if (o.device != "cuda")
      return "--gpu-libs is for --device cuda";
    for (size_t p = 0; p <= o.gpu_libs.size();) {
      size_t q = o.gpu_libs.find(',', p);
      if (q == std::string::npos) q = o.gpu_libs.size();
      const std::string lib = o.gpu_libs.substr(p, q - p);
      if (lib == "cudnn") o.cudnn = true;
      else if (lib == "cublas") o.cublas = true;
      else if (lib != "none" || o.gpu_libs != "none") {
        return fmt::format("unknown --gpu-libs name '{}' (known: cudnn, cublas; e.g. --gpu-libs cudnn,cublas)", lib);
      }
      p = q + 1;
    }
  }
  if (!o.split.empty() && o.gpu_precision == "fp16") {
    return "--gpu-precision fp16 is not for --split: the split runtime runs the GPU parts through NAME_run_device, which cannot "
           "report an activation past half precision's range (65504); use tf32 or fp32";
  }
  if (!o.split.empty() && o.parallel == "batch") {
    return "--parallel batch is not for --split: the split runtime batches requests itself (max_batch) and runs each tail on one "
           "CPU worker; leave --parallel at auto or use loop or task";
  }
  if (o.parallel == "tune" && (o.target != "host" || o.device != "cpu" || !o.split.empty() || o.profile))
    return "--parallel tune times the builds on this machine: it needs --target host and the CPU, without --device cuda, "
           "--split or --profile";
  if (o.device == "cuda" && o.emit == "python")
    return "--device cuda does not support --emit python";
  if (o.verify && o.emit != "exe")
    return "--verify needs --emit exe";
  return "";
}

}  // namespace onnxc::driver
