// What a restarted tuner worker saves by reading the validation reference
// its predecessor wrote (tuner/measure/reference_file.hpp) instead of computing it:
// for gemm f32 NN at each size, and for attention B1 H4 S1024 D128, the
// seconds to compute the double-precision reference of the poisoned-output
// run, to write it, and to read it back.
// Prints one JSON object; the host's cores and KFORGE_HOST_THREADS matter.
//
//   kforge_bench_reference_reuse [N ...]      (default: 512 1024 2048)
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "generator/attention_operator.hpp"
#include "generator/gemm_operator.hpp"
#include "tuner/measure/reference_file.hpp"

using namespace kforge;

namespace {

template <typename F>
double seconds(F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Times computing `raw`'s poisoned-output reference, writing it to a file
/// in `dir` and reading it back; nullopt when the round trip fails.
std::optional<nlohmann::ordered_json> round_trip(const Operator& op, const Problem& raw,
                                                 const std::filesystem::path& dir) {
  const Problem p = op.normalize(raw).value();
  const auto kind = WorkloadKind::kPoisonedOutput;
  const Workload w = op.make_workload(p, 1, kind);
  Reference r;
  const double compute_s = seconds([&] { r = op.reference(p, w); });
  const std::string path = (dir / "r.ref").string();
  const auto key = reference_key(p, 1, kind);
  Status saved = ok_status();
  const double write_s = seconds([&] { saved = save_reference(path, key, r); });
  Result<Reference> back = Error::internal("not read");
  const double read_s = seconds([&] { back = load_reference(path, key); });
  if (!saved.ok() || !back.ok() || back->value != r.value) return std::nullopt;
  return nlohmann::ordered_json{{"problem", p.key()},
                                {"file_mib", static_cast<double>(std::filesystem::file_size(path)) / (1 << 20)},
                                {"compute_s", compute_s},
                                {"write_s", write_s},
                                {"read_s", read_s},
                                {"compute_over_read", compute_s / read_s}};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::stoll(argv[i]));
  if (sizes.empty()) sizes = {512, 1024, 2048};
  const auto dir = std::filesystem::temp_directory_path() / ("kforge-reference-reuse-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  nlohmann::ordered_json out = {{"host_threads", std::thread::hardware_concurrency()},
                                {"directory", dir.parent_path().string()},
                                {"sizes", nlohmann::json::array()}};
  GemmOperator gemm;
  for (std::int64_t n : sizes) {
    Problem raw;
    raw.op = "gemm";
    raw.dims = {{"M", n}, {"N", n}, {"K", n}};
    auto row = round_trip(gemm, raw, dir);
    if (!row) {
      std::cerr << "reference_reuse: gemm N=" << n << ": the round trip failed\n";
      return 1;
    }
    (*row)["n"] = n;
    out["sizes"].push_back(*row);
  }
  // One attention problem of a prefill's shape, as a second operator.
  AttentionOperator attention;
  Problem raw;
  raw.op = "attention";
  raw.dims = {{"B", 1}, {"H", 4}, {"S", 1024}, {"D", 128}};
  auto row = round_trip(attention, raw, dir);
  if (!row) {
    std::cerr << "reference_reuse: attention: the round trip failed\n";
    return 1;
  }
  out["attention"] = *row;
  std::filesystem::remove_all(dir);
  std::cout << out.dump(2) << "\n";
  return 0;
}
