// The host CPU's current clock from cpufreq or /proc/cpuinfo.
#include "cpu_clock_reader.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

namespace kforge {

namespace {

/// Every cpuN/cpufreq/scaling_cur_freq under `cpu_dir` (N digits only).
std::vector<std::string> cpufreq_files(const std::string& cpu_dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(cpu_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 4 || name.rfind("cpu", 0) != 0 ||
        name.find_first_not_of("0123456789", 3) != std::string::npos) {
      continue;
    }
    const auto f = entry.path() / "cpufreq" / "scaling_cur_freq";
    if (std::filesystem::exists(f, ec)) out.push_back(f.string());
  }
  return out;
}

/// The mean of the kHz values in `files`, in MHz; -1 when none reads.
double mean_cpufreq_mhz(const std::vector<std::string>& files) {
  double sum = 0;
  int n = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    double khz = 0;
    if (in >> khz && khz > 0) {
      sum += khz / 1000.0;
      ++n;
    }
  }
  return n ? sum / n : -1.0;
}

/// The mean of /proc/cpuinfo's "cpu MHz : 2445.428" lines; -1 when none.
double mean_cpuinfo_mhz(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  double sum = 0;
  int n = 0;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    char* end = nullptr;
    const double mhz = std::strtod(line.c_str() + colon + 1, &end);
    if (end != line.c_str() + colon + 1 && mhz > 0) {
      sum += mhz;
      ++n;
    }
  }
  return n ? sum / n : -1.0;
}

class CpuClockReader final : public ClockReader {
 public:
  CpuClockReader(std::vector<std::string> cpufreq, std::string cpuinfo)
      : cpufreq_(std::move(cpufreq)), cpuinfo_(std::move(cpuinfo)),
        source_(cpufreq_.empty() ? "/proc/cpuinfo" : "cpufreq") {}

  const std::string& source() const override { return source_; }

  Result<ClockSample> read() override {
    ClockSample s;
    s.core_mhz = cpufreq_.empty() ? mean_cpuinfo_mhz(cpuinfo_) : mean_cpufreq_mhz(cpufreq_);
    if (s.core_mhz <= 0) {
      return Error{ErrorCode::kNotFound,
                   "no CPU frequency in " + (cpufreq_.empty() ? cpuinfo_ : cpufreq_.front()), {}};
    }
    return s;
  }

 private:
  std::vector<std::string> cpufreq_;
  std::string cpuinfo_;
  std::string source_;
};

}  // namespace

Result<std::unique_ptr<ClockReader>> make_cpu_clock_reader(const std::string& cpu_dir, const std::string& cpuinfo) {
  std::vector<std::string> files = cpufreq_files(cpu_dir);
  if (!files.empty() && mean_cpufreq_mhz(files) > 0) {
    return std::unique_ptr<ClockReader>(std::make_unique<CpuClockReader>(std::move(files), cpuinfo));
  }
  if (mean_cpuinfo_mhz(cpuinfo) > 0) {
    return std::unique_ptr<ClockReader>(std::make_unique<CpuClockReader>(std::vector<std::string>{}, cpuinfo));
  }
  return Error::not_found("no CPU clock: neither " + cpu_dir + "/cpu*/cpufreq/scaling_cur_freq nor \"cpu MHz\" in " +
                          cpuinfo);
}

}  // namespace kforge
