// One offline compile per template for the capabilities table.
#include "report/inspect/compile_check.hpp"

#include <algorithm>

#include "generator/backend_traits.hpp"
#include "report/inspect/compile_candidate.hpp"
#include "runtime/device/hip/hip_backend.hpp"

namespace kforge::report {

bool compile_checked(const CapabilityTarget& target) {
  const bool named =
      std::find(target.origins.begin(), target.origins.end(), "--target") != target.origins.end();
  return named && is_backend(target.backend, BackendId::kHip) && arch_resources(target.backend, target.arch) &&
         hiprtc_refuses(target.arch);
}

nlohmann::ordered_json compile_check_json(const TemplateSource& t, const CapabilityTarget& target) {
  const Target tgt = *kforge::parse_target(target.name());
  const auto compiler = compiler_name(tgt, true);  // offline: never an error, an "unavailable" name at worst
  nlohmann::ordered_json j = {{"compiler", compiler.ok() ? *compiler : std::string("clang (offline)")}};
  const auto& m = t.manifest;
  const Operator* op = find_operator(m.op);
  if (m.is_library() || !op || m.dtypes.empty() || m.layouts.empty()) {
    j["status"] = "not_compiled";
    j["reason"] = m.is_library() ? m.name + " calls " + m.library + ": nothing to compile"
                                 : "no problem to compile for";
    return j;
  }
  Problem p;
  p.op = m.op;
  p.dims = op->default_dims();
  p.dtype = m.dtypes.front();
  p.layout = m.layouts.front();
  auto normalized = op->normalize(p);
  if (normalized.ok()) p = *normalized;
  j["problem"] = p.key();
  j["config"] = m.default_config().canonical_name();
  auto c = compile_candidate(tgt, true, t, *op, m.default_config(), p, "");
  if (!c.ok()) {
    j["status"] = "not_supported";
    j["reason"] = c.error().message;
    return j;
  }
  j["status"] = c->status;
  if (!c->reason.empty()) j["reason"] = c->reason;
  j["vgprs"] = c->amd.vgpr_count;
  j["agprs"] = c->amd.agpr_count;
  j["sgprs"] = c->amd.sgpr_count;
  j["lds_bytes"] = c->amd.lds_bytes;
  j["scratch_bytes"] = c->amd.scratch_bytes;
  j["spills"] = c->res.spill_stores;
  j["wavefront_size"] = c->amd.wavefront_size;
  j["threads_per_block"] = c->threads;
  j["occupancy"] = c->occ.occupancy;
  j["occupancy_limiter"] = c->occ.limiter;
  return j;
}

}  // namespace kforge::report
