// Per-architecture resources for compile-only targets and occupancy.
#include "runtime/device/target.hpp"

#include "generator/backend_traits.hpp"

namespace kforge {

namespace {

ArchResources nvidia(const std::string& arch, std::int64_t threads_per_sm, std::int64_t blocks_per_sm,
                     std::int64_t shared_per_sm_kib, std::int64_t optin_kib, std::int64_t sms,
                     const std::string& part) {
  ArchResources r;
  r.backend = "cuda";
  r.arch = arch;
  r.simd_width = 32;
  r.max_threads_per_block = 1024;
  r.max_threads_per_unit = threads_per_sm;
  r.max_blocks_per_unit = blocks_per_sm;
  r.registers_per_unit = 65536;
  r.register_alloc_unit = 256;
  r.max_registers_per_thread = 255;
  r.shared_per_unit = shared_per_sm_kib * 1024;
  r.shared_per_block_static = 48 * 1024;
  r.shared_per_block_optin = optin_kib * 1024;
  r.shared_alloc_unit = 128;
  r.shared_reserved_per_block = arch == "sm_75" ? 0 : 1024;
  r.typical_units = sms;
  r.reference_part = part;
  return r;
}

ArchResources amd(const std::string& arch, std::int64_t wave, std::int64_t vgprs_per_simd,
                  std::int64_t vgpr_granule, std::int64_t simds, std::int64_t waves_per_simd,
                  std::int64_t lds_kib, std::int64_t cus, const std::string& part) {
  ArchResources r;
  r.backend = "hip";
  r.arch = arch;
  r.simd_width = wave;
  r.max_threads_per_block = 1024;
  r.simds_per_unit = simds;
  r.max_waves_per_simd = waves_per_simd;
  r.max_threads_per_unit = simds * waves_per_simd * wave;
  r.max_blocks_per_unit = 40;  // work-groups per CU the dispatcher allows (ISA docs: 40 on GCN/CDNA)
  r.registers_per_unit = vgprs_per_simd;
  r.register_alloc_unit = vgpr_granule;
  r.max_registers_per_thread = vgprs_per_simd;
  r.shared_per_unit = lds_kib * 1024;
  r.shared_per_block_static = lds_kib * 1024;
  r.shared_per_block_optin = lds_kib * 1024;
  r.shared_alloc_unit = 256;
  r.shared_reserved_per_block = 0;
  r.typical_units = cus;
  r.reference_part = part;
  return r;
}

/// CDNA 3 (MI300A, MI300X): 256 MiB of Infinity Cache between HBM and the
/// L2s (AMD Instinct MI300 product briefs); hipDeviceAttributeL2CacheSize
/// reports the 4 MiB L2 only.
ArchResources with_infinity_cache(ArchResources r) {
  r.memory_side_cache_bytes = std::int64_t{256} << 20;
  return r;
}

const std::vector<ArchResources>& table() {
  // NVIDIA: CUDA C++ Programming Guide, "Technical Specifications per Compute
  // Capability"; shared per SM is the largest carveout. AMD: CDNA/RDNA ISA
  // guides; gfx90a and gfx94x VGPR files hold 512 (arch + acc) per lane,
  // allocated in granules of 8.
  static const std::vector<ArchResources> t = {
      nvidia("sm_75", 1024, 16, 64, 64, 40, "Tesla T4"),
      nvidia("sm_80", 2048, 32, 164, 163, 108, "A100"),
      nvidia("sm_86", 1536, 16, 100, 99, 84, "RTX 3090"),
      nvidia("sm_89", 1536, 24, 100, 99, 128, "RTX 4090"),
      nvidia("sm_90", 2048, 32, 228, 227, 132, "H100 / H200 SXM"),
      nvidia("sm_90a", 2048, 32, 228, 227, 132, "H100 / H200 SXM"),
      nvidia("sm_100", 2048, 32, 228, 227, 148, "B200"),
      nvidia("sm_120", 1536, 32, 128, 99, 170, "RTX 5090"),
      amd("gfx906", 64, 256, 4, 4, 10, 64, 60, "MI50"),
      amd("gfx908", 64, 512, 8, 4, 10, 64, 120, "MI100"),
      amd("gfx90a", 64, 512, 8, 4, 8, 64, 110, "MI250X (one GCD)"),
      with_infinity_cache(amd("gfx940", 64, 512, 8, 4, 8, 64, 228, "MI300A")),
      with_infinity_cache(amd("gfx941", 64, 512, 8, 4, 8, 64, 304, "MI300X")),
      with_infinity_cache(amd("gfx942", 64, 512, 8, 4, 8, 64, 304, "MI300X")),
      // CDNA 4: LDS grew to 160 KiB per CU, all of it addressable by one work-group.
      with_infinity_cache(amd("gfx950", 64, 512, 8, 4, 8, 160, 256, "MI355X")),
  };
  return t;
}

}  // namespace

std::optional<ArchResources> arch_resources(const std::string& backend, const std::string& arch) {
  // AMD target ids may carry features: gfx90a:sramecc+:xnack-.
  const std::string base = arch.substr(0, arch.find(':'));
  for (const auto& r : table()) {
    if (r.backend == backend && r.arch == base) return r;
  }
  return std::nullopt;
}

std::vector<std::string> known_archs(const std::string& backend) {
  std::vector<std::string> out;
  for (const auto& r : table())
    if (r.backend == backend) out.push_back(r.arch);
  return out;
}

Result<Target> parse_target(const std::string& text) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    return Error::bad_input("--target: '" + text + "' is not BACKEND:ARCH (e.g. cuda:sm_90, hip:gfx90a)");
  }
  Target t;
  t.backend = text.substr(0, colon);
  t.arch = text.substr(colon + 1);
  const BackendTraits* backend = find_backend(t.backend);
  if (!backend || backend->gpu_vendor.empty()) {
    return Error::bad_input("--target: unknown backend '" + t.backend + "' in '" + text +
                            "' (compile-only targets: cuda, hip)");
  }
  auto r = arch_resources(t.backend, t.arch);
  if (!r) {
    std::string known;
    for (const auto& a : known_archs(t.backend)) known += (known.empty() ? "" : ", ") + a;
    return Error::bad_input("--target: unknown architecture '" + t.arch + "' for " + t.backend + " (known: " +
                            known + ")");
  }
  t.resources = *r;
  DeviceInfo& d = t.info;
  d.selector = text;
  d.backend = t.backend;
  d.vendor = backend->gpu_vendor;
  d.name = t.arch + " (compile-only target, " + r->reference_part + ")";
  d.arch = t.arch;
  d.device_type = DeviceType::kGpu;
  d.compute_units = r->typical_units;
  d.local_mem_bytes = r->shared_per_block_static;
  d.max_shared_bytes = r->shared_per_block_optin;
  d.max_block_threads = r->max_threads_per_block;
  d.simd_width = r->simd_width;
  return t;
}

}  // namespace kforge
