// driver/options.cc — the flags' combinations compile-model refuses (see options.h).
#include "driver/options.h"

#include <fmt/format.h>

#include <algorithm>

#include "passes/pass.h"

namespace onnxc::driver {

const Choices<Emit>& choices(Emit) {
  static const Choices<Emit> c = {{"c", Emit::C}, {"so", Emit::So}, {"exe", Emit::Exe}, {"python", Emit::Python}};
  return c;
}
const Choices<Device>& choices(Device) {
  static const Choices<Device> c = {{"cpu", Device::Cpu}, {"cuda", Device::Cuda}};
  return c;
}
const Choices<Parallel>& choices(Parallel) {
  static const Choices<Parallel> c = {{"auto", Parallel::Auto}, {"loop", Parallel::Loop}, {"task", Parallel::Task},
                                      {"batch", Parallel::Batch}, {"tune", Parallel::Tune}};
  return c;
}
const Choices<OmpRegion>& choices(OmpRegion) {
  static const Choices<OmpRegion> c = {{"inference", OmpRegion::Inference}, {"op", OmpRegion::Op}};
  return c;
}
const Choices<ActivationLayout>& choices(ActivationLayout) {
  static const Choices<ActivationLayout> c = {{"nchwc", ActivationLayout::Nchwc}, {"nchw", ActivationLayout::Nchw}};
  return c;
}
const Choices<RegionForm>& choices(RegionForm) {
  static const Choices<RegionForm> c = {{"omp-tasks", RegionForm::OmpTasks}, {"groups", RegionForm::Groups}};
  return c;
}
const Choices<GpuPrecision>& choices(GpuPrecision) {
  static const Choices<GpuPrecision> c = {
      {precision_name(GpuPrecision::Fp32), GpuPrecision::Fp32},
      {precision_name(GpuPrecision::Tf32), GpuPrecision::Tf32},
      {precision_name(GpuPrecision::Fp16), GpuPrecision::Fp16}};
  return c;
}
const Choices<ConvAlgorithm>& choices(ConvAlgorithm) {
  static const Choices<ConvAlgorithm> c = {
      {"auto", ConvAlgorithm::Auto}, {"direct", ConvAlgorithm::Direct}, {"winograd", ConvAlgorithm::Winograd}};
  return c;
}

RegionForm region_form(const Options& o) { return o.omp_region == OmpRegion::Op ? RegionForm::Sections : o.task_form; }

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
  if (task_form_given && o.omp_region == OmpRegion::Op) {
    return "--task-form is for the one parallel region of --omp-region inference; --omp-region op runs a fork-join region as "
           "`omp parallel sections`";
  }
  if (o.gpu_precision && o.device != Device::Cuda)
    return "--gpu-precision is for --device cuda";
  if (!o.gpu_libs.empty()) {
    if (o.device != Device::Cuda)
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
  if (!o.split.empty() && o.gpu_precision == GpuPrecision::Fp16) {
    return "--gpu-precision fp16 is not for --split: the split runtime runs the GPU parts through NAME_run_device, which cannot "
           "report an activation past half precision's range (65504); use tf32 or fp32";
  }
  if (!o.split.empty() && o.parallel == Parallel::Batch) {
    return "--parallel batch is not for --split: the split runtime batches requests itself (max_batch) and runs each tail on one "
           "CPU worker; leave --parallel at auto or use loop or task";
  }
  if (o.parallel == Parallel::Tune && (o.target != "host" || o.device != Device::Cpu || !o.split.empty() || o.profile))
    return "--parallel tune times the builds on this machine: it needs --target host and the CPU, without --device cuda, "
           "--split or --profile";
  if (o.device == Device::Cuda && o.emit == Emit::Python)
    return "--device cuda does not support --emit python";
  if (o.verify && o.emit != Emit::Exe)
    return "--verify needs --emit exe";
  return "";
}

}  // namespace onnxc::driver
