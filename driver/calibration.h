// driver/calibration.h — compile-model --calibration DIR: the inputs --quantize int8 calibrates on.
//
// A model with one input: every DIR/*.npy is one sample of it. A model with several inputs: every
// subfolder of DIR is one sample, holding INPUT.npy for each graph input (by its ONNX name). Each
// array must be float32, C order, with the input's shape (the model's, after --input-shape).
// Samples are read in file-name order. Anything else is a CompileError(Io) naming the file and
// what is wrong.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor.h"

namespace onnxc::driver {

// Reads a .npy file holding a float32 array in C order.
Tensor read_npy_f32(const std::string& path);

// The calibration samples in dir for graph g's inputs.
std::vector<std::map<const Value*, Tensor>> read_calibration(const std::string& dir, const Graph& g);

}  // namespace onnxc::driver
