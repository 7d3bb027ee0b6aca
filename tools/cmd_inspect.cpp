// `kforge inspect`: resources and instruction mix of compiled artifacts
// (AMDGPU code objects, CUDA cubins, PTX), no GPU needed (docs/inspect.md).
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "report/inspect/artifact_inspect.hpp"
#include "tools/commands.hpp"

namespace kforge::cli {

using namespace kforge::report;  // the command prints what the report library computes

namespace {

struct InspectOptions {
  std::vector<std::string> paths;
  std::string kernel;
};

std::string num(std::int64_t v) {
  return v < 0 ? "-" : std::to_string(v);
}

std::string dims(const std::array<std::int64_t, 3>& d) {
  return d[0] < 0 ? "-" : std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

std::string plural(std::size_t n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

void print_mix(const std::string& kernel, const InstructionMix& mix) {
  std::cout << "\ninstruction mix of " << kernel << ": " << mix.total << " instructions\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& [name, n] : mix.categories) {
    char share[16] = "-";
    if (mix.total)
      std::snprintf(share, sizeof share, "%.1f%%",
                    100.0 * static_cast<double>(n) / static_cast<double>(mix.total));
    rows.push_back({name, std::to_string(n), share});
  }
  print_table({"category", "count", "share"}, rows);
  std::cout << "top:";
  for (const auto& [m, n] : mix.top_mnemonics) std::cout << " " << m << " " << n << ";";
  std::cout << "\n";
}

void print_amd(const ArtifactReport& r) {
  std::cout << r.path << ": AMDGPU code object v" << r.format_version << " for " << r.target_id << ", "
            << plural(r.amd_kernels.size(), "kernel") << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& k : r.amd_kernels) {
    const auto& m = k.metadata;
    rows.push_back({m.name, num(m.vgpr_count), num(m.agpr_count), num(m.sgpr_count),
                    num(m.vgpr_spill_count) + "/" + num(m.sgpr_spill_count), num(m.lds_bytes),
                    num(m.scratch_bytes), num(m.wavefront_size), num(m.max_flat_workgroup_size),
                    std::to_string(k.code_bytes)});
  }
  print_table(
      {"kernel", "vgprs", "agprs", "sgprs", "spills v/s", "lds B", "scratch B", "wave", "max wg", "code B"},
      rows);
  if (!r.disassembly_error.empty()) std::cout << "\nno instruction mix: " << r.disassembly_error << "\n";
  for (const auto& k : r.amd_kernels) {
    if (!r.disassembly_error.empty()) continue;
    print_mix(k.metadata.name, k.mix);
    if (k.undecoded_bytes) std::cout << "(" << k.undecoded_bytes << " bytes could not be decoded)\n";
  }
}

void print_cubin(const ArtifactReport& r) {
  std::cout << r.path << ": CUDA cubin for " << r.target << " (ELF ABI " << r.format_version << "), "
            << plural(r.cubin_kernels.size(), "kernel") << "\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto& report : r.cubin_kernels) {
    const CubinKernel& k = report.attributes;
    const std::string api = k.cuda_api_version < 0 ? "-"
                                                   : std::to_string(k.cuda_api_version / 10) + "." +
                                                         std::to_string(k.cuda_api_version % 10);
    rows.push_back({k.name, num(k.registers), num(k.max_stack_bytes), num(k.frame_bytes),
                    num(k.min_stack_bytes), std::to_string(k.shared_bytes), num(k.constant0_bytes),
                    num(k.param_cbank_bytes), dims(k.max_threads), api, num(k.code_bytes)});
  }
  print_table({"kernel", "regs", "max stack B", "frame B", "min stack B", "smem B", "cmem0 B", "params B",
               "max threads", "CUDA API", "code B"},
              rows);
  if (!r.disassembly_error.empty()) std::cout << "\nno instruction mix: " << r.disassembly_error << "\n";
  for (const auto& k : r.cubin_kernels)
    if (r.disassembly_error.empty()) print_mix(k.attributes.name, k.mix);
}

void print_ptx(const ArtifactReport& r) {
  std::cout << r.path << ": PTX " << r.format_version << " for " << r.target << ", "
            << plural(r.ptx_entries.size(), "entry") << "\n";
  for (const auto& e : r.ptx_entries) print_mix(e.name, e.mix);
}

}  // namespace

void add_inspect_command(CLI::App& app, CommonOptions& o) {
  auto* cmd = app.add_subcommand(
      "inspect",
      "Inspect compiled artifacts without a GPU: AMDGPU code objects (.co/.hsaco: VGPRs, AGPRs, SGPRs,\n"
      "spills, LDS, scratch, wavefront size, max workgroup size, and the instruction mix of the LLVM\n"
      "disassembly: MFMA, global/LDS loads and stores, waits, branches, VALU/SALU), CUDA cubins (ELF\n"
      "resource attributes per kernel: registers, stack, shared and constant memory, parameters, launch\n"
      "bounds; and, where nvdisasm is found, the SASS instruction mix: HMMA/HGMMA, TMA, LDSM, LDGSTS ...)\n"
      "and PTX (instruction mix per .entry: mma, ld/st global and shared, cp.async, ldmatrix, barriers,\n"
      "fma, cvt, branches). A directory written by `kforge compile --out DIR` is inspected\n"
      "file by file. The kind is read from the content, not the extension. Details: docs/inspect.md.");
  auto s = std::make_shared<InspectOptions>();
  cmd->add_option("paths", s->paths, "Artifact files, or directories of them")->required();
  cmd->add_option("--kernel", s->kernel, "Only kernels whose name contains this");
  add_json_flag(*cmd, o);
  cmd->callback([&o, s] {
    std::vector<std::string> files;
    for (const auto& p : s->paths) {
      std::error_code ec;
      if (!std::filesystem::exists(p, ec))
        throw ErrorException(Error::bad_input(p + ": no such file or directory"));
      if (!std::filesystem::is_directory(p, ec)) {
        files.push_back(p);
        continue;
      }
      auto found = unwrap(find_artifacts(p));
      if (found.empty())
        throw ErrorException(Error::bad_input(
            p + ": no compiled artifact in the directory (AMDGPU code object, cubin or PTX)"));
      files.insert(files.end(), found.begin(), found.end());
    }
    std::vector<ArtifactReport> reports;
    std::size_t kernels = 0;
    for (const auto& f : files) {
      reports.push_back(unwrap(inspect_artifact(f, s->kernel)));
      kernels += reports.back().kernel_count();
    }
    if (!s->kernel.empty() && kernels == 0)
      throw ErrorException(Error::not_found("--kernel: no kernel whose name contains '" + s->kernel +
                                            "' in " + plural(files.size(), "artifact")));
    if (o.json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& r : reports) arr.push_back(to_json(r));
      print_json({{"schema_version", kInspectSchemaVersion}, {"artifacts", arr}});
      return;
    }
    for (std::size_t i = 0; i < reports.size(); ++i) {
      if (i) std::cout << "\n";
      const auto& r = reports[i];
      if (r.kind == ArtifactKind::kAmdgpuCodeObject) print_amd(r);
      if (r.kind == ArtifactKind::kCubin) print_cubin(r);
      if (r.kind == ArtifactKind::kPtx) print_ptx(r);
    }
  });
}

}  // namespace kforge::cli
