// Builds and normalizes a Problem from Python's fields.
#include "bindings/python/problem_from_python.hpp"

#include "bindings/python/python_errors.hpp"
#include "generator/operator.hpp"

namespace kforge::python {

namespace {

std::string known_operators() {
  std::string out;
  for (const Operator* op : all_operators()) out += (out.empty() ? "" : ", ") + std::string(op->name());
  return out;
}

}  // namespace

Problem problem_from_fields(const ProblemFields& f) {
  const Operator* op = find_operator(f.op);
  if (!op) throw_bad_input("op: unknown operator '" + f.op + "' (known: " + known_operators() + ")");
  Problem p;
  p.op = f.op;
  p.dims = f.dims;
  auto dtype = parse_dtype(f.dtype);
  if (!dtype) throw_bad_input("dtype: unknown dtype '" + f.dtype + "' (f32, f16, bf16)");
  p.dtype = *dtype;
  auto layout = parse_layout(f.layout);
  if (!layout) throw_bad_input("layout: unknown layout '" + f.layout + "' (NN, NT, TN, TT)");
  p.layout = *layout;
  auto epilogue = parse_epilogue(f.epilogue);
  if (!epilogue.ok()) throw_bad_input("epilogue: " + epilogue.error().message);
  p.epilogue = *epilogue;
  p.attrs = f.attrs;
  return unwrap(op->normalize(std::move(p)));
}

}  // namespace kforge::python
