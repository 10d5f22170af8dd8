// driver/options.cc — the flags' combinations compile-model refuses (see options.h).
#include "driver/options.h"

#include <fmt/format.h>

#include <algorithm>

#include "passes/pass.h"

namespace onnxc::driver {

const Choices<Emit>& choices(Emit) {
  static const Choices<Emit> c = {{"c", Emit::C}, {"so", Emit::So}, {"exe", Emit::Exe}, {"python", Emit::Python}, {"ray", Emit::Ray}};
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
const Choices<Quantized>& choices(Quantized) {
  static const Choices<Quantized> c = {{"float", Quantized::Float}, {"integer", Quantized::Integer}};
  return c;
}
const Choices<Quantize>& choices(Quantize) {
  static const Choices<Quantize> c = {{"none", Quantize::None}, {"int8", Quantize::Int8}, {"int8-dynamic", Quantize::Int8Dynamic}};
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

std::string parse_dynamic(const std::string& spec, DynamicDim* d, bool fixed) {
  const std::string usage = fixed ? "--fix-dim '" + spec + "' must look like SYMBOL=N (batch=1) or INPUT:AXIS=N (input:0=1)"
                                  : "--dynamic '" + spec + "' must look like SYMBOL=MAX (batch=16) or INPUT:AXIS=MAX (input:0=16)";
  const size_t eq = spec.rfind('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) return usage;
  const std::string name = spec.substr(0, eq), max = spec.substr(eq + 1);
  if (max.find_first_not_of("0123456789") != std::string::npos || max.size() > 9) return usage;
  *d = DynamicDim{};
  d->max = std::stoll(max);
  if (fixed && (d->max < 1 || d->max > kDynamicMax))
    return fmt::format("--fix-dim '{}': N must be from 1 to {}", spec, kDynamicMax);
  if (!fixed && (d->max < 2 || d->max > kDynamicMax))
    return fmt::format("--dynamic '{}': MAX must be from 2 to {} (a size that is always 1 is a static one: --fix-dim or --input-shape)",
                       spec, kDynamicMax);
  const size_t colon = name.rfind(':');
  const std::string axis = colon == std::string::npos ? "" : name.substr(colon + 1);
  if (colon != std::string::npos && colon > 0 && !axis.empty() && axis.size() < 4 &&
      axis.find_first_not_of("0123456789") == std::string::npos) {
    d->input = name.substr(0, colon);
    d->axis = std::stoi(axis);
  } else {
    d->symbol = name;
  }
  return "";
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
  if (o.device == Device::Cuda && (o.emit == Emit::Python || o.emit == Emit::Ray))
    return fmt::format("--device cuda does not support --emit {}", flag_name(o.emit));
  if (o.emit == Emit::Ray && !o.split.empty())
    return "--emit ray serves one model: not with --split (the split executor is the CPU/GPU scheduler of one machine)";
  if (o.verify && o.emit != Emit::Exe)
    return "--verify needs --emit exe";
  if (o.quantize == Quantize::None && !o.calibration.empty())
    return "--calibration is for --quantize int8";
  if (o.quantize == Quantize::Int8 && o.calibration.empty())
    return "--quantize int8 needs --calibration DIR: sample inputs (.npy) whose value ranges set the activations' scales";
  if (o.quantize == Quantize::Int8Dynamic && !o.calibration.empty())
    return "--quantize int8-dynamic quantizes the activations at run time: it takes no --calibration (that is --quantize int8's)";
  if (o.quantize != Quantize::None) {  // both modes quantize the imported graph, for the CPU's integer kernels
    const std::string q = "--quantize " + flag_name(o.quantize);
    if (o.device == Device::Cuda) return q + " is for the CPU (the CUDA backend has no integer kernels)";
    if (!o.split.empty()) return q + " is not for --split yet";
    if (!o.dynamic.empty() || o.parallel == Parallel::Batch)
      return q + " quantizes the model as imported, one batch: not with --dynamic or --parallel batch yet";
  }
  if (o.quantize == Quantize::Int8 && !o.quantized_given) o.quantized = Quantized::Integer;
  o.dynamic_dims.clear();
  for (const std::string& spec : o.dynamic) {
    DynamicDim d;
    if (std::string why = parse_dynamic(spec, &d); !why.empty()) return why;
    o.dynamic_dims.push_back(d);
  }
  o.fixed_dims.clear();
  for (const std::string& spec : o.fix_dim) {
    DynamicDim d;
    if (std::string why = parse_dynamic(spec, &d, true); !why.empty()) return why;
    for (const DynamicDim& e : o.dynamic_dims)
      if (e.symbol == d.symbol && e.input == d.input && e.axis == d.axis)
        return fmt::format("--fix-dim {} and --dynamic {} name the same dimension: give it with one of them", spec, e.spec());
    o.fixed_dims.push_back(d);
  }
  if (!o.dynamic.empty()) {
    const char* what = o.device == Device::Cuda ? "--device cuda"
                       : o.profile              ? "--profile"
                       : o.parallel != Parallel::Auto ? "--parallel other than auto"
                                                      : nullptr;
    if (what)
      return fmt::format("--dynamic is not for {}: a run-time batch runs on the CPU, its items side by side on one thread each "
                         "(as many as the threads) and the rest one after another on all the threads",
                         what);
  }
  return "";
}

}  // namespace onnxc::driver
