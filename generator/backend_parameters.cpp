// Parameters held at their defaults where they do not apply (backend_parameters.hpp).
#include "generator/backend_parameters.hpp"

#include <algorithm>

#include "generator/triton_spec.hpp"

namespace kforge {

namespace {

bool applies(const TritonSpec& spec, const std::string& parameter, std::string_view backend) {
  if (backend == kInterpreterBackend) return !is_triton_option(parameter);
  const auto it = spec.parameter_backends.find(parameter);
  return it == spec.parameter_backends.end() ||
         std::find(it->second.begin(), it->second.end(), backend) != it->second.end();
}

}  // namespace

TemplateManifest manifest_for_backend(const TemplateManifest& m, std::string_view backend) {
  TemplateManifest out = m;
  if (m.kind != TemplateKindId::kTriton || !m.triton) return out;
  for (Parameter& p : out.parameters) {
    if (!applies(*m.triton, p.name, backend)) p.values = {p.default_value};
  }
  return out;
}

}  // namespace kforge
