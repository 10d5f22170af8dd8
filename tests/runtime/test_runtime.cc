// test_runtime.cc — unit tests for the plain-C runtime (runtime/onnxc_runtime.c), called through
// the copy with external linkage that tests/runtime/runtime_extern.c builds.
//
// Every file the runtime reads is built byte by byte here (weights headers, .npy headers), so
// the tests check the runtime against the documented formats, not against its own writer; the
// writer is then checked by write→read round trips. Files go to GoogleTest's TempDir and are
// removed when the tests end.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

#include "onnxc_runtime.h"

namespace {

using Bytes = std::vector<unsigned char>;

std::string TmpPrefix() { return "onnxc_rt_" + std::to_string(getpid()) + "_"; }

std::string TmpPath(const std::string& name) { return ::testing::TempDir() + TmpPrefix() + name; }

// Removes this process's files from TempDir when every test has run.
class RemoveTmpFiles : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(::testing::TempDir(), ec))
      if (e.path().filename().string().rfind(TmpPrefix(), 0) == 0) std::filesystem::remove(e.path(), ec);
  }
};
[[maybe_unused]] ::testing::Environment* const remove_tmp_files = ::testing::AddGlobalTestEnvironment(new RemoveTmpFiles);

void WriteFile(const std::string& path, const Bytes& b) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  size_t written = b.empty() ? 0 : std::fwrite(b.data(), 1, b.size(), f);
  std::fclose(f);
  ASSERT_EQ(written, b.size()) << path;
}

void PutLe(Bytes& b, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

template <typename T>
Bytes AsBytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// FNV-1a 64, written independently of the runtime.
uint64_t Fnv1a(const Bytes& b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : b) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

struct WeightsSpec {
  const char* magic = "ONNXCWTS";
  uint32_t version = 1;
  uint32_t header_size = 64;
  bool override_size = false;
  uint64_t payload_size = 0;
  bool override_checksum = false;
  uint64_t checksum = 0;
};

Bytes MakeWeights(const Bytes& payload, const WeightsSpec& s = WeightsSpec()) {
  Bytes b(s.magic, s.magic + 8);
  PutLe(b, s.version, 4);
  PutLe(b, s.header_size, 4);
  PutLe(b, s.override_size ? s.payload_size : payload.size(), 8);
  PutLe(b, s.override_checksum ? s.checksum : Fnv1a(payload), 8);
  b.resize(64, 0);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

Bytes SamplePayload(size_t n) {
  Bytes p(n);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(i * 7 + 3);
  return p;
}

// .npy file from a header dict, padded like NumPy does (to 64 bytes, ending in '\n').
Bytes MakeNpy(const std::string& dict, const Bytes& data, int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  std::string h = dict;
  while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  Bytes b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<unsigned char>(major), 0};
  PutLe(b, h.size(), major == 1 ? 2 : 4);
  b.insert(b.end(), h.begin(), h.end());
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

bool Aligned64(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 63u) == 0; }

const int64_t kShape23[] = {2, 3};
const int64_t kShape123[] = {1, 2, 3};
const onnxc_tensor_info kF32_23 = {"x", ONNXC_F32, 2, kShape23, 6};
const onnxc_tensor_info kF32_123 = {"x", ONNXC_F32, 3, kShape123, 6};
const onnxc_tensor_info kI64_23 = {"ids", ONNXC_I64, 2, kShape23, 6};

std::string Detail() { return onnxc_last_error_detail(); }

// ---------------------------------------------------------------- basics

TEST(Runtime, ChecksumKnownValues) {
  EXPECT_EQ(onnxc_checksum("", 0), 0xcbf29ce484222325ull);
  EXPECT_EQ(onnxc_checksum("a", 1), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(onnxc_checksum(nullptr, 0), 0xcbf29ce484222325ull);
  Bytes p = SamplePayload(1000);
  EXPECT_EQ(onnxc_checksum(p.data(), p.size()), Fnv1a(p));
}

TEST(Runtime, DtypesAndStatusStrings) {
  EXPECT_EQ(onnxc_dtype_size(ONNXC_F32), 4u);
  EXPECT_EQ(onnxc_dtype_size(ONNXC_I64), 8u);
  EXPECT_EQ(onnxc_dtype_size(ONNXC_BOOL), 1u);
  EXPECT_EQ(onnxc_dtype_size(ONNXC_F64), 8u);
  EXPECT_EQ(onnxc_dtype_size(ONNXC_U16), 2u);
  EXPECT_EQ(onnxc_dtype_size(ONNXC_F16), 2u);
  EXPECT_STREQ(onnxc_dtype_name(ONNXC_F16), "float16");
  EXPECT_EQ(onnxc_dtype_size(16), 0u);  // bfloat16: not supported
  EXPECT_STREQ(onnxc_dtype_name(ONNXC_F32), "float32");
  EXPECT_STREQ(onnxc_dtype_name(ONNXC_I64), "int64");
  EXPECT_STREQ(onnxc_dtype_name(ONNXC_BOOL), "bool");
  EXPECT_STREQ(onnxc_dtype_name(999), "unknown");
  EXPECT_STREQ(onnxc_status_string(ONNXC_ERR_CHECKSUM), "weights file checksum mismatch");
  EXPECT_STREQ(onnxc_status_string(ONNXC_ERR_DEVICE), "GPU error");
  for (int c = 0; c <= ONNXC_ERR_TARGET; ++c) EXPECT_STRNE(onnxc_status_string(c), "unknown error");
  EXPECT_STREQ(onnxc_status_string(ONNXC_ERR_TARGET + 1), "unknown error");
  char buf[64];
  EXPECT_STREQ(onnxc_format_type(buf, sizeof buf, ONNXC_F32, 2, kShape23), "float32[2,3]");
  EXPECT_STREQ(onnxc_format_type(buf, sizeof buf, ONNXC_I64, 0, nullptr), "int64[]");
  char small[6];
  EXPECT_STREQ(onnxc_format_type(small, sizeof small, ONNXC_F32, 2, kShape23), "float");
  onnxc_set_error_detail("x=%d", 5);
  EXPECT_EQ(Detail(), "x=5");
  onnxc_clear_error_detail();
  EXPECT_EQ(Detail(), "");
}

TEST(Runtime, FailAndPrefix) {
  EXPECT_EQ(onnxc_fail(ONNXC_ERR_SIZE, "tensor '%s' is %d bytes", "x", 12), ONNXC_ERR_SIZE);
  EXPECT_EQ(Detail(), "tensor 'x' is 12 bytes");
  onnxc_prefix_error_detail("m_create");
  EXPECT_EQ(Detail(), "m_create: tensor 'x' is 12 bytes");
  onnxc_clear_error_detail();
  onnxc_prefix_error_detail("m_run");
  EXPECT_EQ(Detail(), "m_run: ");
  onnxc_prefix_error_detail(nullptr);
  EXPECT_EQ(Detail(), ": m_run: ");
  // a detail that fills the 1 KiB buffer is truncated at its end, the prefix kept whole
  std::string long_detail(2000, 'd');
  onnxc_set_error_detail("%s", long_detail.c_str());
  EXPECT_EQ(Detail().size(), 1023u);
  onnxc_prefix_error_detail("fn");
  EXPECT_EQ(Detail().size(), 1023u);
  EXPECT_EQ(Detail().rfind("fn: ddd", 0), 0u) << Detail().substr(0, 20);
  // and a prefix longer than the buffer is cut, still NUL-terminated
  std::string long_prefix(3000, 'p');
  onnxc_prefix_error_detail(long_prefix.c_str());
  EXPECT_EQ(Detail().size(), 1023u);
  EXPECT_EQ(Detail().substr(1019), "pp: ");
}

TEST(Runtime, CheckBuffers) {
  const int64_t s4[] = {4};
  const onnxc_tensor_info t[] = {{"a", ONNXC_F32, 2, kShape23, 6}, {"b", ONNXC_I64, 1, s4, 4}};
  float a[6];
  int64_t b[4];
  const void* bufs[] = {a, b};
  const size_t bytes[] = {24, 32};
  EXPECT_EQ(onnxc_check_buffers("m_run_v", "input", t, 2, bufs, bytes), ONNXC_OK) << Detail();
  EXPECT_EQ(onnxc_check_buffers("m_run", "input", t, 2, bufs, nullptr), ONNXC_OK) << Detail();
  EXPECT_EQ(onnxc_check_buffers("m_run", "input", t, 0, nullptr, nullptr), ONNXC_OK) << Detail();
  const size_t wrong[] = {24, 31};
  EXPECT_EQ(onnxc_check_buffers("m_run_v", "input", t, 2, bufs, wrong), ONNXC_ERR_SIZE);
  EXPECT_EQ(Detail(), "m_run_v: input 1 'b' (int64[4]): 31 bytes given, 32 expected");
  const void* null_second[] = {a, nullptr};
  EXPECT_EQ(onnxc_check_buffers("m_run", "output", t, 2, null_second, nullptr), ONNXC_ERR_ARG);
  EXPECT_EQ(Detail(), "m_run: output 1 'b' (int64[4]): the buffer is NULL");
}

// --dynamic: the batch of a run_v call from its buffers' sizes (tensors of at most 4 items).
TEST(Runtime, BatchOfSizes) {
  const int64_t s43[] = {4, 3}, s4[] = {4}, s40[] = {4, 0};
  const onnxc_tensor_info in[] = {{"a", ONNXC_F32, 2, s43, 12}, {"b", ONNXC_I64, 1, s4, 4}};
  const onnxc_tensor_info empty[] = {{"e", ONNXC_F32, 2, s40, 0}};
  int64_t batch = 0;
  const size_t three[] = {36, 24};  // 3 items of 12 and of 8 bytes
  ASSERT_EQ(onnxc_batch_of_sizes("m_run_v", "input", in, 2, three, 4, &batch), ONNXC_OK) << Detail();
  EXPECT_EQ(batch, 3);
  const size_t out_three[] = {36};
  EXPECT_EQ(onnxc_batch_of_sizes("m_run_v", "output", in, 1, out_three, 4, &batch), ONNXC_OK) << Detail();
  const size_t out_two[] = {24};
  EXPECT_EQ(onnxc_batch_of_sizes("m_run_v", "output", in, 1, out_two, 4, &batch), ONNXC_ERR_SIZE);
  EXPECT_EQ(Detail(), "m_run_v: output 0 'a' (float32[4,3]): 24 bytes given, 2 items of 12 bytes, but the batch is 3 items");
  batch = 0;
  const size_t mixed[] = {36, 16};
  EXPECT_EQ(onnxc_batch_of_sizes("m_run_v", "input", in, 2, mixed, 4, &batch), ONNXC_ERR_SIZE);
  EXPECT_EQ(Detail(), "m_run_v: input 1 'b' (int64[4]): 16 bytes given, 2 items of 8 bytes, but the batch is 3 items");
  for (size_t bad : {size_t{0}, size_t{13}, size_t{60}}) {  // none, not whole items, past 4 items
    batch = 0;
    const size_t sizes[] = {bad, 8};
    EXPECT_EQ(onnxc_batch_of_sizes("m_run_v", "input", in, 2, sizes, 4, &batch), ONNXC_ERR_SIZE) << bad;
    EXPECT_EQ(Detail(), "m_run_v: input 0 'a' (float32[4,3]): " + std::to_string(bad) + " bytes given, expected 1 to 4 items of 12 bytes");
  }
  batch = 2;  // an empty item says nothing, and must get no bytes
  const size_t none[] = {0}, some[] = {4};
  EXPECT_EQ(onnxc_batch_of_sizes("m_run_v", "output", empty, 1, none, 4, &batch), ONNXC_OK) << Detail();
  EXPECT_EQ(batch, 2);
  EXPECT_EQ(onnxc_batch_of_sizes("m_run_v", "output", empty, 1, some, 4, &batch), ONNXC_ERR_SIZE);
  // Along another dimension (a run-time token count, [1, 4, 3]): rows, not items.
  const int64_t s143[] = {1, 4, 3};
  const onnxc_tensor_info tokens[] = {{"t", ONNXC_F32, 3, s143, 12}};
  int64_t rows = 0;
  const size_t two_rows[] = {24}, odd[] = {20};
  ASSERT_EQ(onnxc_count_of_sizes("m_run_v", "input", tokens, 1, two_rows, 1, 4, &rows), ONNXC_OK) << Detail();
  EXPECT_EQ(rows, 2);
  rows = 0;
  EXPECT_EQ(onnxc_count_of_sizes("m_run_v", "input", tokens, 1, odd, 1, 4, &rows), ONNXC_ERR_SIZE);
  EXPECT_EQ(Detail(), "m_run_v: input 0 't' (float32[1,4,3]): 20 bytes given, expected 1 to 4 rows of 12 bytes along dimension 1");
  rows = 3;
  EXPECT_EQ(onnxc_count_of_sizes("m_run_v", "output", tokens, 1, two_rows, 1, 4, &rows), ONNXC_ERR_SIZE);
  EXPECT_EQ(Detail(), "m_run_v: output 0 't' (float32[1,4,3]): 24 bytes given, 2 rows of 12 bytes, but the run has 3 rows");
  onnxc_tensor_info two;
  int64_t shape[ONNXC_MAX_NDIM];
  onnxc_tensor_info_batch(&in[0], 2, &two, shape);
  EXPECT_EQ(two.numel, 6u);
  EXPECT_EQ(two.shape[0], 2);
  EXPECT_EQ(two.shape[1], 3);
  EXPECT_STREQ(two.name, "a");
}

TEST(Runtime, AlignedAlloc) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{63}, size_t{64}, size_t{1000}}) {
    auto* p = static_cast<unsigned char*>(onnxc_aligned_alloc(n));
    ASSERT_NE(p, nullptr) << n;
    EXPECT_TRUE(Aligned64(p));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(p[i], 0) << i;
    onnxc_aligned_free(p);
  }
  EXPECT_EQ(onnxc_aligned_alloc(SIZE_MAX), nullptr);
  EXPECT_EQ(onnxc_aligned_alloc(SIZE_MAX - 10), nullptr);
  onnxc_aligned_free(nullptr);
  double t0 = onnxc_now_seconds(), t1 = onnxc_now_seconds();
  EXPECT_GT(t0, 0.0);
  EXPECT_GE(t1, t0);
}

// ---------------------------------------------------------------- weights

TEST(Weights, RoundTrip) {
  Bytes payload = SamplePayload(200);
  std::string path = TmpPath("ok.weights");
  WriteFile(path, MakeWeights(payload));
  onnxc_weights w;
  ASSERT_EQ(onnxc_weights_load_file(path.c_str(), payload.size(), Fnv1a(payload), &w), ONNXC_OK) << Detail();
  EXPECT_EQ(w.size, payload.size());
  EXPECT_TRUE(Aligned64(w.data));
  EXPECT_NE(w.owned, nullptr);
  EXPECT_EQ(std::memcmp(w.data, payload.data(), payload.size()), 0);
  onnxc_weights_free(&w);
  EXPECT_EQ(w.data, nullptr);
  onnxc_weights_free(&w);  // idempotent
  onnxc_weights_free(nullptr);
}

TEST(Weights, EmptyPayload) {
  std::string path = TmpPath("empty.weights");
  WriteFile(path, MakeWeights(Bytes()));
  onnxc_weights w;
  ASSERT_EQ(onnxc_weights_load_file(path.c_str(), 0, Fnv1a(Bytes()), &w), ONNXC_OK) << Detail();
  EXPECT_EQ(w.size, 0u);
  onnxc_weights_free(&w);
}

// Writes `file`, loads it expecting the sample payload, returns the status (w is always freed).
int LoadBad(const std::string& name, const Bytes& file, uint64_t expected_size = 200,
            uint64_t expected_checksum = Fnv1a(SamplePayload(200))) {
  std::string path = TmpPath(name);
  WriteFile(path, file);
  onnxc_weights w;
  int rc = onnxc_weights_load_file(path.c_str(), expected_size, expected_checksum, &w);
  if (rc != ONNXC_OK) {
    EXPECT_EQ(w.data, nullptr);
    EXPECT_EQ(w.owned, nullptr);
    EXPECT_NE(Detail().find(path), std::string::npos) << Detail();
  }
  onnxc_weights_free(&w);
  return rc;
}

TEST(Weights, TruncatedFile) {
  Bytes good = MakeWeights(SamplePayload(200));
  EXPECT_EQ(LoadBad("empty_file.weights", Bytes()), ONNXC_ERR_FORMAT);
  EXPECT_EQ(LoadBad("trunc_header.weights", Bytes(good.begin(), good.begin() + 30)), ONNXC_ERR_FORMAT);
  EXPECT_EQ(LoadBad("trunc_payload.weights", Bytes(good.begin(), good.end() - 1)), ONNXC_ERR_SIZE);
  Bytes longer = good;
  longer.push_back(0);
  EXPECT_EQ(LoadBad("long_payload.weights", longer), ONNXC_ERR_SIZE);
}

TEST(Weights, WrongMagic) {
  WeightsSpec s;
  s.magic = "ONNXCWTX";
  EXPECT_EQ(LoadBad("magic.weights", MakeWeights(SamplePayload(200), s)), ONNXC_ERR_FORMAT);
}

TEST(Weights, WrongVersion) {
  WeightsSpec s;
  s.version = 2;
  EXPECT_EQ(LoadBad("version.weights", MakeWeights(SamplePayload(200), s)), ONNXC_ERR_VERSION);
  WeightsSpec h;
  h.header_size = 128;
  EXPECT_EQ(LoadBad("hsize.weights", MakeWeights(SamplePayload(200), h)), ONNXC_ERR_FORMAT);
}

TEST(Weights, SizeMismatch) {
  Bytes payload = SamplePayload(200);
  // the model expects another size
  EXPECT_EQ(LoadBad("size1.weights", MakeWeights(payload), 256), ONNXC_ERR_SIZE);
  EXPECT_NE(Detail().find("256"), std::string::npos) << Detail();
  EXPECT_NE(Detail().find("another model"), std::string::npos) << Detail();
  // header claims more than the file holds (huge value must not overflow or allocate)
  WeightsSpec s;
  s.override_size = true;
  s.payload_size = UINT64_MAX;
  EXPECT_EQ(LoadBad("size2.weights", MakeWeights(payload, s), UINT64_MAX), ONNXC_ERR_SIZE);
  s.payload_size = UINT64_MAX - 63;
  EXPECT_EQ(LoadBad("size3.weights", MakeWeights(payload, s), UINT64_MAX - 63), ONNXC_ERR_SIZE);
}

TEST(Weights, ChecksumMismatch) {
  Bytes payload = SamplePayload(200);
  Bytes corrupted = MakeWeights(payload);
  corrupted[64 + 17] ^= 1;
  EXPECT_EQ(LoadBad("corrupt.weights", corrupted), ONNXC_ERR_CHECKSUM);
  // a valid file, but of another build
  EXPECT_EQ(LoadBad("other.weights", MakeWeights(payload), 200, 12345), ONNXC_ERR_CHECKSUM);
}

TEST(Weights, MissingFile) {
  onnxc_weights w;
  std::string path = TmpPath("does_not_exist.weights");
  EXPECT_EQ(onnxc_weights_load_file(path.c_str(), 0, 0, &w), ONNXC_ERR_IO);
  EXPECT_NE(Detail().find(path), std::string::npos) << Detail();
  EXPECT_EQ(onnxc_weights_load_file(::testing::TempDir().c_str(), 0, 0, &w), ONNXC_ERR_IO);  // a directory
  EXPECT_EQ(onnxc_weights_load_file(nullptr, 0, 0, &w), ONNXC_ERR_ARG);
  EXPECT_EQ(onnxc_weights_load_file(path.c_str(), 0, 0, nullptr), ONNXC_ERR_ARG);
}

TEST(Weights, FromMemoryAlignedAndUnaligned) {
  Bytes payload = SamplePayload(300);
  Bytes file = MakeWeights(payload);
  auto* block = static_cast<unsigned char*>(onnxc_aligned_alloc(file.size() + 64));
  ASSERT_NE(block, nullptr);
  for (size_t shift : {size_t{0}, size_t{1}, size_t{8}, size_t{63}}) {
    unsigned char* blob = block + shift;
    std::memcpy(blob, file.data(), file.size());
    onnxc_weights w;
    ASSERT_EQ(onnxc_weights_from_memory(blob, file.size(), payload.size(), Fnv1a(payload), &w), ONNXC_OK)
        << Detail();
    EXPECT_TRUE(Aligned64(w.data)) << shift;
    EXPECT_EQ(w.size, payload.size());
    EXPECT_EQ(std::memcmp(w.data, payload.data(), payload.size()), 0);
    if (shift == 0) {
      EXPECT_EQ(w.data, blob + 64);  // used in place
      EXPECT_EQ(w.owned, nullptr);
    } else {
      EXPECT_NE(w.owned, nullptr);  // copied
    }
    onnxc_weights_free(&w);
  }
  onnxc_aligned_free(block);
}

TEST(Weights, FromMemoryBad) {
  Bytes payload = SamplePayload(100);
  Bytes file = MakeWeights(payload);
  uint64_t sum = Fnv1a(payload);
  onnxc_weights w;
  // exact-size heap copies so ASan catches any read past the end
  std::vector<unsigned char> shortv(file.begin(), file.begin() + 63);
  EXPECT_EQ(onnxc_weights_from_memory(shortv.data(), shortv.size(), 100, sum, &w), ONNXC_ERR_FORMAT);
  std::vector<unsigned char> trunc(file.begin(), file.end() - 1);
  EXPECT_EQ(onnxc_weights_from_memory(trunc.data(), trunc.size(), 100, sum, &w), ONNXC_ERR_SIZE);
  EXPECT_EQ(onnxc_weights_from_memory(nullptr, 0, 100, sum, &w), ONNXC_ERR_FORMAT);
  EXPECT_EQ(onnxc_weights_from_memory(nullptr, 10, 100, sum, &w), ONNXC_ERR_ARG);
  Bytes bad = file;
  bad[64] ^= 0xff;
  EXPECT_EQ(onnxc_weights_from_memory(bad.data(), bad.size(), 100, sum, &w), ONNXC_ERR_CHECKSUM);
  bad = file;
  bad[8] = 9;
  EXPECT_EQ(onnxc_weights_from_memory(bad.data(), bad.size(), 100, sum, &w), ONNXC_ERR_VERSION);
  EXPECT_EQ(w.data, nullptr);
}

// ---------------------------------------------------------------- tensor files

const char* kDictF32 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

TEST(TensorFile, NpyFloat32) {
  std::vector<float> v = {1.5f, -2.f, 3.25f, 0.f, 1e-3f, 7.f};
  std::string path = TmpPath("f32.npy");
  WriteFile(path, MakeNpy(kDictF32, AsBytes(v)));
  std::vector<float> got(6, -1.f);
  ASSERT_EQ(onnxc_read_tensor_file(path.c_str(), &kF32_23, got.data()), ONNXC_OK) << Detail();
  EXPECT_EQ(got, v);
  // leading 1s may differ: (2, 3) file into a (1, 2, 3) tensor
  std::fill(got.begin(), got.end(), -1.f);
  ASSERT_EQ(onnxc_read_tensor_file(path.c_str(), &kF32_123, got.data()), ONNXC_OK) << Detail();
  EXPECT_EQ(got, v);
}

TEST(TensorFile, NpyInt64VersionsAndSpelling) {
  std::vector<int64_t> v = {1, -2, 3, INT64_MAX, INT64_MIN, 0};
  // v2.0 header, double quotes, no trailing comma, Python 2 'L' suffixes
  std::string path = TmpPath("i64.npy");
  WriteFile(path, MakeNpy("{\"descr\": \"<i8\", \"shape\": (2L, 3L), \"fortran_order\": False}", AsBytes(v), 2));
  std::vector<int64_t> got(6, 42);
  ASSERT_EQ(onnxc_read_tensor_file(path.c_str(), &kI64_23, got.data()), ONNXC_OK) << Detail();
  EXPECT_EQ(got, v);
  std::string path3 = TmpPath("i64v3.npy");
  WriteFile(path3, MakeNpy("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2, 3, 1), }", AsBytes(v), 3));
  ASSERT_EQ(onnxc_read_tensor_file(path3.c_str(), &kI64_23, got.data()), ONNXC_OK) << Detail();
  EXPECT_EQ(got, v);
}

TEST(TensorFile, NpyBoolAndScalar) {
  const int64_t shape4[] = {4};
  onnxc_tensor_info info = {"m", ONNXC_BOOL, 1, shape4, 4};
  Bytes data = {1, 0, 0, 1};
  std::string path = TmpPath("b1.npy");
  WriteFile(path, MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }", data));
  Bytes got(4, 7);
  ASSERT_EQ(onnxc_read_tensor_file(path.c_str(), &info, got.data()), ONNXC_OK) << Detail();
  EXPECT_EQ(got, data);
  // a 0-d array into a rank-1 tensor of one element
  const int64_t shape1[] = {1};
  onnxc_tensor_info one = {"s", ONNXC_F64, 1, shape1, 1};
  std::string spath = TmpPath("scalar.npy");
  WriteFile(spath, MakeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", AsBytes(std::vector<double>{2.5})));
  double d = 0;
  ASSERT_EQ(onnxc_read_tensor_file(spath.c_str(), &one, &d), ONNXC_OK) << Detail();
  EXPECT_EQ(d, 2.5);
}

int ReadNpy(const std::string& name, const std::string& dict, const Bytes& data,
            const onnxc_tensor_info& info = kF32_23, int major = 1) {
  std::string path = TmpPath(name);
  WriteFile(path, MakeNpy(dict, data, major));
  std::vector<unsigned char> dst(info.numel * onnxc_dtype_size(info.dtype) + 1);
  int rc = onnxc_read_tensor_file(path.c_str(), &info, dst.data());
  if (rc != ONNXC_OK) {
    EXPECT_NE(Detail().find(path), std::string::npos) << Detail();
  }
  return rc;
}

TEST(TensorFile, NpyWrongDtype) {
  Bytes d24(24), d48(48);
  EXPECT_EQ(ReadNpy("dt1.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", d24), ONNXC_ERR_DTYPE);
  EXPECT_NE(Detail().find("int32"), std::string::npos) << Detail();
  EXPECT_EQ(ReadNpy("dt2.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }", d48), ONNXC_ERR_DTYPE);
  EXPECT_EQ(ReadNpy("dt3.npy", "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", d24), ONNXC_ERR_DTYPE);
  EXPECT_EQ(ReadNpy("dt4.npy", "{'descr': '<c8', 'fortran_order': False, 'shape': (2, 3), }", d48), ONNXC_ERR_DTYPE);
  EXPECT_EQ(ReadNpy("dt5.npy", "{'descr': '<f4xx', 'fortran_order': False, 'shape': (2, 3), }", d24), ONNXC_ERR_DTYPE);
  EXPECT_EQ(ReadNpy("dt6.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", d48, kI64_23),
            ONNXC_ERR_DTYPE);
}

TEST(TensorFile, NpyWrongShape) {
  Bytes d24(24), d28(28);
  // element count differs
  EXPECT_EQ(ReadNpy("sh1.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (7,), }", d28), ONNXC_ERR_SHAPE);
  EXPECT_NE(Detail().find("float32[2,3]"), std::string::npos) << Detail();
  // same count, different dims
  EXPECT_EQ(ReadNpy("sh2.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", d24), ONNXC_ERR_SHAPE);
  EXPECT_EQ(ReadNpy("sh3.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", d24), ONNXC_ERR_SHAPE);
  EXPECT_EQ(ReadNpy("sh4.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 3), }", d24),
            ONNXC_ERR_SHAPE);
  // overflowing element count
  EXPECT_EQ(ReadNpy("sh5.npy",
                    "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 2), }", d24),
            ONNXC_ERR_SHAPE);
  // data shorter or longer than the shape says
  EXPECT_EQ(ReadNpy("sh6.npy", kDictF32, Bytes(20)), ONNXC_ERR_SIZE);
  EXPECT_EQ(ReadNpy("sh7.npy", kDictF32, Bytes(28)), ONNXC_ERR_SIZE);
}

TEST(TensorFile, NpyFortranOrderAndMalformed) {
  Bytes d24(24);
  EXPECT_EQ(ReadNpy("fo.npy", "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", d24), ONNXC_ERR_FORMAT);
  EXPECT_NE(Detail().find("Fortran"), std::string::npos) << Detail();
  const char* bad[] = {
      "",
      "{",
      "{'descr': '<f4', 'fortran_order': False}",                               // no shape
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}",      // unknown key
      "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}",  // repeated key
      "{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2, 3), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2 3), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, }",
      "{'descr': '<f4, 'fortran_order': False, 'shape': (2, 3), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3), }",
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } trailing",
  };
  int i = 0;
  for (const char* dict : bad)
    EXPECT_EQ(ReadNpy("bad" + std::to_string(i++) + ".npy", dict, d24), ONNXC_ERR_FORMAT) << dict;
  std::string many = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int k = 0; k < 40; ++k) many += "1, ";
  many += "2, 3), }";
  EXPECT_EQ(ReadNpy("manydims.npy", many, d24), ONNXC_ERR_FORMAT);
}

TEST(TensorFile, NpyTruncatedHeader) {
  Bytes file = MakeNpy(kDictF32, Bytes(24));
  std::vector<float> dst(6);
  // header length claims more bytes than the file has
  for (size_t keep : {size_t{0}, size_t{5}, size_t{9}, size_t{10}, size_t{11}, size_t{40}, size_t{63}}) {
    std::string path = TmpPath("trunc" + std::to_string(keep) + ".npy");
    WriteFile(path, Bytes(file.begin(), file.begin() + keep));
    EXPECT_EQ(onnxc_read_tensor_file(path.c_str(), &kF32_23, dst.data()), ONNXC_ERR_FORMAT) << keep;
  }
  // header length field itself huge (v2.0)
  Bytes huge = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0xff, 0xff, 0xff, 0xff, '{', '}'};
  std::string path = TmpPath("huge.npy");
  WriteFile(path, huge);
  EXPECT_EQ(onnxc_read_tensor_file(path.c_str(), &kF32_23, dst.data()), ONNXC_ERR_FORMAT);
  // bad magic, unknown version
  Bytes magic = file;
  magic[1] = 'X';
  WriteFile(path, magic);
  EXPECT_EQ(onnxc_read_tensor_file(path.c_str(), &kF32_23, dst.data()), ONNXC_ERR_FORMAT);
  Bytes v9 = file;
  v9[6] = 9;
  WriteFile(path, v9);
  EXPECT_EQ(onnxc_read_tensor_file(path.c_str(), &kF32_23, dst.data()), ONNXC_ERR_VERSION);
}

TEST(TensorFile, RawWrongSize) {
  std::vector<float> dst(6);
  for (size_t n : {size_t{0}, size_t{23}, size_t{25}}) {
    std::string path = TmpPath("raw" + std::to_string(n) + ".bin");
    WriteFile(path, Bytes(n));
    EXPECT_EQ(onnxc_read_tensor_file(path.c_str(), &kF32_23, dst.data()), ONNXC_ERR_SIZE) << n;
    EXPECT_NE(Detail().find(path), std::string::npos) << Detail();
    EXPECT_NE(Detail().find("float32[2,3]"), std::string::npos) << Detail();
    EXPECT_NE(Detail().find("24"), std::string::npos) << Detail();
  }
  EXPECT_EQ(onnxc_read_tensor_file(TmpPath("nope.bin").c_str(), &kF32_23, dst.data()), ONNXC_ERR_IO);
}

// --dynamic: how many items a file holds for a tensor of at most 2 x 3 floats (items of 3).
TEST(TensorFile, BatchOfFiles) {
  int64_t batch = 0;
  std::string one = TmpPath("batch1.npy"), two = TmpPath("batch2.npy"), three = TmpPath("batch3.npy");
  std::string other = TmpPath("batch_other.npy"), f64 = TmpPath("batch_f64.npy");
  WriteFile(one, MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3), }", Bytes(12)));
  WriteFile(two, MakeNpy(kDictF32, Bytes(24)));
  WriteFile(three, MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), }", Bytes(36)));
  WriteFile(other, MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", Bytes(32)));
  WriteFile(f64, MakeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 3), }", Bytes(24)));
  ASSERT_EQ(onnxc_tensor_file_batch(one.c_str(), &kF32_23, 2, &batch), ONNXC_OK) << Detail();
  EXPECT_EQ(batch, 1);
  ASSERT_EQ(onnxc_tensor_file_batch(two.c_str(), &kF32_23, 2, &batch), ONNXC_OK) << Detail();
  EXPECT_EQ(batch, 2);
  EXPECT_EQ(onnxc_tensor_file_batch(three.c_str(), &kF32_23, 2, &batch), ONNXC_ERR_SHAPE);
  EXPECT_NE(Detail().find("holds float32[3,3], expected 1 to 2 items of float32[3]"), std::string::npos) << Detail();
  EXPECT_EQ(onnxc_tensor_file_batch(other.c_str(), &kF32_23, 2, &batch), ONNXC_ERR_SHAPE);
  EXPECT_EQ(onnxc_tensor_file_batch(f64.c_str(), &kF32_23, 2, &batch), ONNXC_ERR_DTYPE);
  for (size_t n : {size_t{12}, size_t{24}}) {  // raw: whole items
    std::string path = TmpPath("batch" + std::to_string(n) + ".bin");
    WriteFile(path, Bytes(n));
    ASSERT_EQ(onnxc_tensor_file_batch(path.c_str(), &kF32_23, 2, &batch), ONNXC_OK) << Detail();
    EXPECT_EQ(static_cast<size_t>(batch), n / 12);
  }
  for (size_t n : {size_t{0}, size_t{16}, size_t{36}}) {
    std::string path = TmpPath("batchbad" + std::to_string(n) + ".bin");
    WriteFile(path, Bytes(n));
    EXPECT_EQ(onnxc_tensor_file_batch(path.c_str(), &kF32_23, 2, &batch), ONNXC_ERR_SIZE) << n;
    EXPECT_NE(Detail().find("expected 1 to 2 items of 12 bytes"), std::string::npos) << Detail();
  }
  // the tensor must hold the batch in its first dimension
  EXPECT_EQ(onnxc_tensor_file_batch(one.c_str(), &kF32_23, 4, &batch), ONNXC_ERR_ARG);
}

// --dynamic seq=MAX: the rows a file holds along dimension 1 of a tensor [1, 2, 3] (rows of 3).
TEST(TensorFile, RowsOfFilesAlongASecondDimension) {
  int64_t rows = 0;
  std::string one = TmpPath("rows1.npy"), three = TmpPath("rows3.npy"), wide = TmpPath("rows_wide.npy");
  WriteFile(one, MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 3), }", Bytes(12)));
  WriteFile(three, MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 3), }", Bytes(36)));
  WriteFile(wide, MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 3), }", Bytes(24)));
  ASSERT_EQ(onnxc_tensor_file_count(one.c_str(), &kF32_123, 1, 2, &rows), ONNXC_OK) << Detail();
  EXPECT_EQ(rows, 1);
  EXPECT_EQ(onnxc_tensor_file_count(three.c_str(), &kF32_123, 1, 2, &rows), ONNXC_ERR_SHAPE);
  EXPECT_NE(Detail().find("expected 1 to 2 rows of float32[3] along dimension 1"), std::string::npos) << Detail();
  EXPECT_EQ(onnxc_tensor_file_count(wide.c_str(), &kF32_123, 1, 2, &rows), ONNXC_ERR_SHAPE);  // its first dimension is not 1
  onnxc_tensor_info run;
  int64_t shape[ONNXC_MAX_NDIM];
  onnxc_tensor_info_count(&kF32_123, 1, 1, &run, shape);
  EXPECT_EQ(run.numel, 3u);
  EXPECT_EQ(run.shape[0], 1);
  EXPECT_EQ(run.shape[1], 1);
  EXPECT_EQ(run.shape[2], 3);
}

// Two run-time sizes (a batch of at most 2 items of at most 4 rows of 3): both from a .npy
// file's shape; a raw file's size gives only their product.
TEST(TensorFile, ItemsAndRowsOfAFile) {
  const int64_t s243[] = {2, 4, 3};
  const onnxc_tensor_info t = {"t", ONNXC_F32, 3, s243, 24};
  int64_t b = 0, n = 0;
  std::string ok = TmpPath("dims_ok.npy"), items = TmpPath("dims_items.npy"), rows = TmpPath("dims_rows.npy"), raw = TmpPath("dims.bin");
  WriteFile(ok, MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3, 3), }", Bytes(72)));
  WriteFile(items, MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 1, 3), }", Bytes(36)));
  WriteFile(rows, MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 5, 3), }", Bytes(60)));
  WriteFile(raw, Bytes(72));
  ASSERT_EQ(onnxc_tensor_file_dims(ok.c_str(), &t, 2, 1, 4, &b, &n), ONNXC_OK) << Detail();
  EXPECT_EQ(b, 2);
  EXPECT_EQ(n, 3);
  for (const std::string& bad : {items, rows}) {
    EXPECT_EQ(onnxc_tensor_file_dims(bad.c_str(), &t, 2, 1, 4, &b, &n), ONNXC_ERR_SHAPE) << bad;
    EXPECT_NE(Detail().find("expected 1 to 2 items (its first dimension, the batch) of 1 to 4 rows along dimension 1 of float32[3]"),
              std::string::npos)
        << Detail();
  }
  EXPECT_EQ(onnxc_tensor_file_dims(raw.c_str(), &t, 2, 1, 4, &b, &n), ONNXC_ERR_ARG);  // 2 x 3 or 3 x 2?
  EXPECT_NE(Detail().find("give a .npy file"), std::string::npos) << Detail();
  WriteFile(raw, Bytes(96));  // the most of both: 2 x 4, which no other pair gives
  ASSERT_EQ(onnxc_tensor_file_dims(raw.c_str(), &t, 2, 1, 4, &b, &n), ONNXC_OK) << Detail();
  EXPECT_EQ(b, 2);
  EXPECT_EQ(n, 4);
}

TEST(TensorFile, BadInfo) {
  std::vector<float> dst(6);
  onnxc_tensor_info bad = kF32_23;
  bad.dtype = 16;  // bfloat16: no such dtype in the runtime
  EXPECT_EQ(onnxc_read_tensor_file("x.npy", &bad, dst.data()), ONNXC_ERR_DTYPE);
  EXPECT_EQ(onnxc_read_tensor_file("x.npy", nullptr, dst.data()), ONNXC_ERR_ARG);
  EXPECT_EQ(onnxc_read_tensor_file("x.npy", &kF32_23, nullptr), ONNXC_ERR_ARG);
  EXPECT_EQ(onnxc_write_tensor_file(nullptr, &kF32_23, dst.data()), ONNXC_ERR_ARG);
}

TEST(TensorFile, WriteReadRoundTrip) {
  std::vector<float> v = {1.f, 2.f, -3.f, 4.5f, 1e30f, -0.f};
  for (const char* name : {"rt.npy", "rt.bin"}) {
    std::string path = TmpPath(name);
    ASSERT_EQ(onnxc_write_tensor_file(path.c_str(), &kF32_123, v.data()), ONNXC_OK) << Detail();
    std::vector<float> got(6);
    ASSERT_EQ(onnxc_read_tensor_file(path.c_str(), &kF32_123, got.data()), ONNXC_OK) << Detail();
    EXPECT_EQ(std::memcmp(got.data(), v.data(), 24), 0);
  }
  // the .npy header is what NumPy writes: v1.0, 64-byte aligned data, exact dict text
  FILE* f = std::fopen(TmpPath("rt.npy").c_str(), "rb");
  ASSERT_NE(f, nullptr);
  Bytes b(4096);
  b.resize(std::fread(b.data(), 1, b.size(), f));
  std::fclose(f);
  ASSERT_GE(b.size(), 10u);
  EXPECT_EQ(std::memcmp(b.data(), "\x93NUMPY\x01\x00", 8), 0);
  size_t hlen = b[8] | (b[9] << 8);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  EXPECT_EQ(b.size(), 10 + hlen + 24);
  std::string dict(b.begin() + 10, b.begin() + 10 + hlen);
  EXPECT_EQ(dict.rfind("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }", 0), 0u) << dict;
  EXPECT_EQ(dict.back(), '\n');
  // raw file is just the bytes
  std::string raw = TmpPath("rt.bin");
  f = std::fopen(raw.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::fseek(f, 0, SEEK_END);
  EXPECT_EQ(std::ftell(f), 24);
  std::fclose(f);
}

TEST(TensorFile, WriteNpyOtherRanks) {
  const int64_t s1[] = {3};
  onnxc_tensor_info r1 = {"a", ONNXC_I64, 1, s1, 3};
  onnxc_tensor_info r0 = {"b", ONNXC_U8, 0, nullptr, 1};
  std::vector<int64_t> v = {5, 6, 7};
  std::string p1 = TmpPath("r1.npy"), p0 = TmpPath("r0.npy");
  ASSERT_EQ(onnxc_write_tensor_file(p1.c_str(), &r1, v.data()), ONNXC_OK);
  unsigned char byte = 200;
  ASSERT_EQ(onnxc_write_tensor_file(p0.c_str(), &r0, &byte), ONNXC_OK);
  std::vector<int64_t> got(3);
  ASSERT_EQ(onnxc_read_tensor_file(p1.c_str(), &r1, got.data()), ONNXC_OK) << Detail();
  EXPECT_EQ(got, v);
  unsigned char b = 0;
  ASSERT_EQ(onnxc_read_tensor_file(p0.c_str(), &r0, &b), ONNXC_OK) << Detail();
  EXPECT_EQ(b, 200);
  // the written headers spell rank 1 as "(3,)" and rank 0 as "()"
  for (auto [path, want] : {std::pair{p1, "'shape': (3,), }"}, std::pair{p0, "'descr': '|u1'"}}) {
    FILE* f = std::fopen(path.c_str(), "rb");
    ASSERT_NE(f, nullptr);
    char buf[128] = {0};
    ASSERT_GT(std::fread(buf, 1, sizeof buf - 1, f), 64u);
    std::fclose(f);
    EXPECT_NE(std::string(buf + 10, 100).find(want), std::string::npos) << buf + 10;
  }
  EXPECT_EQ(onnxc_write_tensor_file(TmpPath("no/such/dir.npy").c_str(), &r1, v.data()), ONNXC_ERR_IO);
}

}  // namespace
