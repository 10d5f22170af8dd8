// ir/error.h — how the compiler reports problems.
//
// A CompileError is a user error: the model is malformed (Kind::Invalid) or valid but
// not supported by onnxc (Kind::Unsupported). It carries the node's name, op type and
// opset when it comes from a node, and the tool prefixes the model path, giving
//   model.onnx: node 'conv_3' (Conv, opset 13): kernel rank 3 not supported
// Compiler bugs are not CompileErrors: they use ONNXC_ASSERT and are reported as
// internal errors.
#pragma once
#include <stdexcept>
#include <string>

namespace onnxc {

class CompileError : public std::runtime_error {
 public:
  enum class Kind { Invalid, Unsupported, Io };
  CompileError(Kind kind, std::string msg) : std::runtime_error(msg), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

[[noreturn]] void fail_invalid(const std::string& msg);
[[noreturn]] void fail_unsupported(const std::string& msg);

struct InternalError : std::logic_error {
  using std::logic_error::logic_error;
};
[[noreturn]] void internal_error(const char* file, int line, const char* cond, const std::string& msg);

}  // namespace onnxc

#define ONNXC_ASSERT(cond, msg)                                          \
  do {                                                                   \
    if (!(cond)) ::onnxc::internal_error(__FILE__, __LINE__, #cond, msg); \
  } while (0)
