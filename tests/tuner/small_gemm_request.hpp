// The small tuning request the PoCL tuner tests share: gemm f32 NN of one
// template, square, a few candidates; each test sets its protocol.
#pragma once

#include "core/dtype.hpp"
#include "tuner/tuner.hpp"

namespace kforge::test {

/// A gemm f32 NN request of one template at M = N = K = `n`, `max_evals` candidates.
inline TuneRequest small_gemm_request(const TemplateSource* tpl, std::int64_t n, int max_evals) {
  TuneRequest req;
  req.problem.op = "gemm";
  req.problem.dims = {{"M", n}, {"N", n}, {"K", n}, {"batch", 1}};
  req.problem.dtype = Dtype::kF32;
  req.problem.layout = *parse_layout("NN");
  req.templates = {tpl};
  req.max_evals = max_evals;
  return req;
}

}  // namespace kforge::test
