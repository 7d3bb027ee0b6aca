// `kforge compile`: compile-only mode. Compiles template instances for a GPU
// architecture with NVRTC, hipRTC or the offline HIP compiler (clang-22), no
// GPU needed, and reports each candidate's resources, the occupancy they
// allow and whether the tuner would prune it (compile_candidate.hpp). Opens
// no device (hipRTC and PoCL must not share a process).
#include <filesystem>

#include "generator/backend_traits.hpp"
#include "generator/operator.hpp"
#include "generator/search_space.hpp"
#include "report/inspect/artifact_inspect.hpp"
#include "report/inspect/compile_candidate.hpp"
#include "report/inspect/triton_compile.hpp"
#include "runtime/catalog/arch_guard.hpp"
#include "runtime/device/target.hpp"
#include "tools/commands.hpp"

namespace kforge::cli {

using namespace kforge::report;  // the command prints what the report library computes

namespace {

struct CompileOptions {
  std::string target;
  std::string config;
  int max_configs = 0;
  std::string out_dir;
  std::string compiler = "auto";
  std::string triton_dir;
  double timeout_s = 300;
};

/// `n` configurations spread evenly over `all` (all of them when n <= 0 or n >= size).
std::vector<Config> sample(const std::vector<Config>& all, int n) {
  if (n <= 0 || static_cast<std::size_t>(n) >= all.size()) return all;
  std::vector<Config> out;
  for (int i = 0; i < n; ++i) out.push_back(all[static_cast<std::size_t>(i) * all.size() / static_cast<std::size_t>(n)]);
  return out;
}

nlohmann::json to_json(const CompiledCandidate& c, const std::string& backend) {
  nlohmann::json j = {{"template", c.template_name}, {"config", c.config},       {"status", c.status},
                      {"registers", c.res.registers},   {"shared_bytes", c.res.local_mem_bytes},
                      {"stack_bytes", c.res.private_mem_bytes}, {"spill_stores", c.res.spill_stores},
                      {"spill_loads", c.res.spill_loads}, {"threads_per_block", c.threads},
                      {"occupancy", c.occ.occupancy},   {"occupancy_limiter", c.occ.limiter},
                      {"blocks_per_unit", c.occ.blocks_per_unit}, {"pruned", c.prune.has_value()},
                      {"compile_ms", c.compile_ms}};
  if (!c.reason.empty()) j["reason"] = c.reason;
  if (is_backend(backend, BackendId::kHip) && !c.amd.name.empty()) {
    j["amdgpu"] = {{"vgprs", c.amd.vgpr_count}, {"agprs", c.amd.agpr_count}, {"sgprs", c.amd.sgpr_count},
                   {"lds_bytes", c.amd.lds_bytes}, {"scratch_bytes", c.amd.scratch_bytes},
                   {"wavefront_size", c.amd.wavefront_size}, {"vgpr_spills", c.amd.vgpr_spill_count},
                   {"sgpr_spills", c.amd.sgpr_spill_count}};
  }
  return j;
}

std::string num(std::int64_t v) { return v < 0 ? "-" : std::to_string(v); }

/// "mma 24, ldmatrix 8, tma 2": the tensor-core and data-movement counts
/// that say whether the code is what the template meant.
std::string mix_summary(const InstructionMix& mix) {
  std::string s;
  for (const char* k : {"mma", "mfma", "ldmatrix", "tma", "cp_async", "lds_load", "ld_shared"}) {
    if (const std::int64_t n = mix.count(k); n > 0) s += (s.empty() ? "" : ", ") + std::string(k) + " " + std::to_string(n);
  }
  return s.empty() ? "-" : s;
}

/// `kforge compile --triton DIR`: the helpers compile, kforge's readers judge.
void compile_triton(const CompileOptions& c, const CommonOptions& o, const Target& target) {
  const Problem problem = make_problem(o);
  TritonSweepOptions so;
  so.max_configs = c.max_configs;
  so.out_dir = c.out_dir;
  so.timeout_s = c.timeout_s;
  if (!c.config.empty()) {
    // A canonical name (BLOCK_M128_num_warps4) cannot be split where names
    // hold digits and '_': one configuration is given as JSON.
    if (c.config.front() != '{') throw ErrorException(Error::bad_input("--config with --triton: a JSON object, e.g. '{\"BLOCK_M\": 128}'"));
    so.config_json = c.config;
  }
  auto results = unwrap(compile_triton_template(c.triton_dir, target, problem, so));
  const std::string compiler = "triton (" + triton_python() + ")";
  if (o.json) {
    nlohmann::json cands = nlohmann::json::array();
    for (const auto& r : results) {
      nlohmann::json j = to_json(r.compiled, target.backend);
      j["binary_format"] = r.format;
      j["triton_metadata"] = r.metadata;
      j["launch_abi"] = r.launch_abi;
      j["instruction_mix"] = r.disassembly_error.empty() ? kforge::cli::to_json(r.mix) : nlohmann::json(nullptr);
      if (!r.disassembly_error.empty()) j["disassembly_error"] = r.disassembly_error;
      cands.push_back(std::move(j));
    }
    print_json({{"target", c.target}, {"arch", target.arch}, {"compiler", compiler}, {"problem", problem.key()},
                {"template_dir", c.triton_dir}, {"min_useful_occupancy", kMinUsefulOccupancy}, {"candidates", cands}});
    return;
  }
  std::cout << problem.key() << " for " << c.target << " (" << target.resources.reference_part << "), " << compiler
            << ": " << results.size() << " candidate(s)\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) {
    const CompiledCandidate& k = r.compiled;
    rows.push_back({k.config, k.status, num(k.res.registers), num(k.res.local_mem_bytes),
                    num(k.res.spill_stores) + "/" + num(k.res.spill_loads), std::to_string(k.threads),
                    k.status == "compile_error" ? "-" : fmt(100.0 * k.occ.occupancy, 3) + "% (" + k.occ.limiter + ")",
                    r.disassembly_error.empty() ? mix_summary(r.mix) : "-", k.reason});
  }
  print_table({"config", "status", "regs", "smem B", "spill st/ld", "threads", "occupancy", "instructions", "why"}, rows);
}

/// The templates `compile` builds for the problem on the target: with
/// --template, the user's alone.
std::vector<const TemplateSource*> templates_to_compile(const TemplateCatalog& catalog, const CommonOptions& o,
                                                        const Problem& problem, const Target& target) {
  std::vector<const TemplateSource*> templates = catalog.for_op(problem.op, target.backend);
  if (!o.template_dirs.empty()) {
    std::vector<const TemplateSource*> user;
    for (const auto* t : templates)
      if (t->origin.rfind("builtin:", 0) != 0) user.push_back(t);
    templates = user;
  }
  if (templates.empty()) {
    throw ErrorException(Error::bad_input("no template for " + problem.op + " targets " + target.backend));
  }
  return templates;
}

/// Why `compile` skips the template `m` for the problem on the target; "" when it does not.
std::string skip_reason(const TemplateManifest& m, const Target& target, const Problem& problem) {
  if (m.is_library()) return m.name + " calls " + m.library + ": nothing to compile";
  if (Status g = check_arch_guard(m, target.backend, target.arch); !g.ok()) return g.error().message;
  if (!m.supports(problem.dtype) || !m.supports(problem.layout)) {
    return m.name + " does not support dtype " + std::string(dtype_name(problem.dtype)) + " with layout " +
           problem.layout.name();
  }
  return "";
}

/// The configurations of `m` that `compile` builds: --config's when it is
/// one of them, else the valid space sampled down to --max-configs.
std::vector<Config> configs_to_compile(const CompileOptions& c, const TemplateManifest& m, const Operator& op,
                                       const Problem& problem, const Target& target) {
  if (!c.config.empty()) {
    Config cfg = unwrap(Config::parse(c.config));
    if (!m.check_declared(cfg).ok()) return {};  // another template's configuration
    return {cfg};
  }
  SearchSpace space(m, op, problem, target.info.limits());
  return sample(unwrap(space.enumerate()), c.max_configs);
}

void print_compiled(const CompileOptions& c, const CommonOptions& o, const Target& target, const std::string& compiler,
                    const Problem& problem, const std::vector<CompiledCandidate>& results,
                    const nlohmann::json& skipped) {
  if (o.json) {
    nlohmann::json cands = nlohmann::json::array();
    for (const auto& r : results) cands.push_back(to_json(r, target.backend));
    print_json({{"target", c.target},
                {"arch", target.arch},
                {"compiler", compiler},
                {"problem", problem.key()},
                {"min_useful_occupancy", kMinUsefulOccupancy},
                {"candidates", cands},
                {"skipped_templates", skipped}});
    return;
  }
  std::cout << problem.key() << " for " << c.target << " (" << target.resources.reference_part << "), " << compiler
            << ": " << results.size() << " candidate(s)\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : results) {
    rows.push_back({r.template_name, r.config, r.status, num(r.res.registers), num(r.res.local_mem_bytes),
                    num(r.res.spill_stores) + "/" + num(r.res.spill_loads), std::to_string(r.threads),
                    r.status == "compile_error" || r.status == "not_supported"
                        ? "-"
                        : fmt(100.0 * r.occ.occupancy, 3) + "% (" + r.occ.limiter + ")",
                    r.reason});
  }
  print_table({"template", "config", "status", "regs", "smem B", "spill st/ld", "threads", "occupancy", "why"},
              rows);
  for (const auto& s : skipped) std::cout << "skipped " << s["template"].get<std::string>() << ": "
                                          << s["reason"].get<std::string>() << "\n";
}

void run_compile(const CompileOptions& c, CommonOptions& o) {
  const Target target = unwrap(parse_target(c.target));
  if (!c.triton_dir.empty()) return compile_triton(c, o, target);
  const bool offline = uses_offline_hip(target, c.compiler);
  const std::string compiler = unwrap(compiler_name(target, offline));
  TemplateCatalog catalog = make_catalog(o);  // first: it registers declared operators
  Problem problem = make_problem(o);
  const Operator* op = find_operator(problem.op);
  if (!c.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(c.out_dir, ec);
    if (ec) throw ErrorException(Error::bad_input("--out: cannot create '" + c.out_dir + "': " + ec.message()));
  }
  std::vector<CompiledCandidate> results;
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto* tpl : templates_to_compile(catalog, o, problem, target)) {
    if (std::string why = skip_reason(tpl->manifest, target, problem); !why.empty()) {
      skipped.push_back({{"template", tpl->manifest.name}, {"reason", why}});
      continue;
    }
    for (const auto& cfg : configs_to_compile(c, tpl->manifest, *op, problem, target))
      results.push_back(unwrap(compile_candidate(target, offline, *tpl, *op, cfg, problem, c.out_dir)));
  }
  if (!c.config.empty() && results.empty()) {
    throw ErrorException(Error::bad_input("--config: '" + c.config + "' is not a configuration of any template "
                                          "for " + problem.op + " on " + target.backend));
  }
  print_compiled(c, o, target, compiler, problem, results, skipped);
}

}  // namespace

void add_compile_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand("compile",
                                 "Compile template instances for a GPU architecture (no GPU needed) and report "
                                 "registers, shared memory, spills, occupancy and pruning");
  auto c = std::make_shared<CompileOptions>();
  cmd->add_option("--target", c->target, "cuda:sm_80, cuda:sm_90, hip:gfx90a, ... (docs/compile-only.md)")->required();
  add_problem_flags(*cmd, o);
  add_template_flag(*cmd, o);
  add_json_flag(*cmd, o);
  cmd->add_option("--config", c->config, "Compile only this configuration (canonical name)");
  cmd->add_option("--max-configs", c->max_configs, "At most this many configurations per template, spread "
                                                   "evenly over the valid space (0: all)")
      ->check(integer_at_least(0));
  cmd->add_option("--compiler", c->compiler,
                  "HIP targets: hiprtc, clang (offline clang-22, compile-only) or auto: hipRTC where it reaches the "
                  "architecture, clang where not (gfx942, gfx950)")
      ->check(CLI::IsMember({"auto", "hiprtc", "clang"}));
  cmd->add_option("--triton", c->triton_dir,
                  "A Triton template directory (manifest.json + kernel.py, docs/triton.md): compiled by Triton's "
                  "compiler through the Triton helpers, each binary read by kforge's readers");
  cmd->add_option("--timeout", c->timeout_s, "With --triton: seconds per compile before it is stopped")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--out", c->out_dir, "Write each instance's source, binary (cubin + PTX, or code object) and log here");
  cmd->callback([&o, c] { run_compile(*c, o); });
}

}  // namespace kforge::cli
