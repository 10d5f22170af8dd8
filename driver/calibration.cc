// driver/calibration.cc — reading --calibration DIR (see calibration.h).
#include "driver/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace onnxc::driver {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw CompileError(CompileError::Kind::Io, "--calibration: '" + path + "': " + what);
}

// The value of `key` in a .npy header dict ("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }").
std::string header_field(const std::string& h, const std::string& key, const std::string& path) {
  size_t k = h.find("'" + key + "'");
  if (k == std::string::npos) bad(path, "its .npy header has no '" + key + "'");
  size_t p = h.find(':', k);
  if (p == std::string::npos) bad(path, "its .npy header is malformed");
  ++p;
  while (p < h.size() && h[p] == ' ') ++p;
  size_t e = p;
  if (p < h.size() && h[p] == '(') {
    e = h.find(')', p);
    if (e == std::string::npos) bad(path, "its .npy header is malformed");
    return h.substr(p, e - p + 1);
  }
  while (e < h.size() && h[e] != ',' && h[e] != '}') ++e;
  return h.substr(p, e - p);
}

std::vector<fs::path> sorted(const fs::path& dir, bool dirs) {
  std::vector<fs::path> r;
  for (auto& e : fs::directory_iterator(dir))
    if (dirs ? e.is_directory() : (e.is_regular_file() && e.path().extension() == ".npy")) r.push_back(e.path());
  std::sort(r.begin(), r.end());
  return r;
}

}  // namespace

Tensor read_npy_f32(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) bad(path, "cannot open it");
  char magic[8];
  if (!f.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) bad(path, "not a .npy file");
  uint32_t hlen = 0;
  if (magic[6] == 1) {
    unsigned char b[2];
    if (!f.read(reinterpret_cast<char*>(b), 2)) bad(path, "its .npy header is truncated");
    hlen = b[0] | (b[1] << 8);
  } else if (magic[6] == 2 || magic[6] == 3) {
    unsigned char b[4];
    if (!f.read(reinterpret_cast<char*>(b), 4)) bad(path, "its .npy header is truncated");
    hlen = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint32_t>(b[3]) << 24);
  } else {
    bad(path, fmt::format(".npy format version {} is not one onnxc reads (1, 2 or 3)", static_cast<int>(magic[6])));
  }
  if (hlen > (1u << 20)) bad(path, "its .npy header is too long");
  std::string h(hlen, '\0');
  if (!f.read(h.data(), hlen)) bad(path, "its .npy header is truncated");
  std::string descr = header_field(h, "descr", path);
  descr.erase(std::remove(descr.begin(), descr.end(), '\''), descr.end());
  if (descr != "<f4" && descr != "|f4") bad(path, "its dtype is " + descr + ", not float32 (<f4)");
  if (header_field(h, "fortran_order", path) != "False") bad(path, "it is in Fortran order; save it in C order");
  std::string shp = header_field(h, "shape", path);
  Shape shape;
  for (size_t p = 1; p < shp.size();) {
    while (p < shp.size() && (shp[p] == ' ' || shp[p] == ',')) ++p;
    if (p >= shp.size() || shp[p] == ')') break;
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(shp.substr(p), &used);
    } catch (const std::exception&) {
      bad(path, "its .npy shape " + shp + " is malformed");
    }
    if (v < 0 || shape.size() >= static_cast<size_t>(kMaxRank)) bad(path, "its .npy shape " + shp + " is not one onnxc reads");
    shape.push_back(v);
    p += used;
  }
  Tensor t(DType::F32, shape);
  if (!f.read(reinterpret_cast<char*>(t.bytes.data()), static_cast<std::streamsize>(t.nbytes())))
    bad(path, fmt::format("it holds fewer than the {} bytes of its shape {}", t.nbytes(), shape_str(shape)));
  return t;
}

std::vector<std::map<const Value*, Tensor>> read_calibration(const std::string& dir, const Graph& g) {
  if (!fs::is_directory(dir)) bad(dir, "not a folder");
  for (const Value* in : g.inputs)
    if (in->dtype != DType::F32)
      bad(dir, fmt::format("the model's input '{}' is {}, and --quantize int8 calibrates float32 inputs only", in->name, in->type_str()));
  auto take = [&](const Value* in, const fs::path& file, std::map<const Value*, Tensor>& sample) {
    Tensor t = read_npy_f32(file.string());
    if (t.shape != in->shape)
      bad(file.string(), fmt::format("shape {}, but the model's input '{}' is {}", shape_str(t.shape), in->name, shape_str(in->shape)));
    sample[in] = std::move(t);
  };
  std::vector<std::map<const Value*, Tensor>> samples;
  if (g.inputs.size() == 1) {
    for (const fs::path& file : sorted(dir, false)) {
      samples.emplace_back();
      take(g.inputs[0], file, samples.back());
    }
    if (samples.empty()) bad(dir, fmt::format("no .npy file (one per sample of the input '{}')", g.inputs[0]->name));
  } else {
    for (const fs::path& sub : sorted(dir, true)) {
      samples.emplace_back();
      for (const Value* in : g.inputs) {
        fs::path file = sub / (in->name + ".npy");
        if (!fs::is_regular_file(file)) bad(sub.string(), "no " + in->name + ".npy (a sample holds one .npy per model input)");
        take(in, file, samples.back());
      }
    }
    if (samples.empty()) bad(dir, "no subfolder (one per sample, each with INPUT.npy for every model input)");
  }
  return samples;
}

}  // namespace onnxc::driver
