// The host CPU's current clock from cpufreq or /proc/cpuinfo, other
// processes' share of its time from /proc/stat, and how long tasks waited
// for a core from /proc/pressure/cpu.
#include "runtime/profiling/cpu_clock_reader.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
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

/// CPU time so far, clock ticks: the host's over all cores, the busy part
/// of it, and this process's (all its threads).
struct CpuTimes {
  double all = 0, busy = 0, self = 0;
};

/// /proc/stat's aggregate "cpu" line (user nice system idle iowait irq
/// softirq steal ...; guest time is inside user) and /proc/self/stat's utime
/// and stime (fields 14 and 15, after the parenthesized command name).
std::optional<CpuTimes> cpu_times(const std::string& proc_stat, const std::string& self_stat) {
  CpuTimes t;
  std::ifstream stat(proc_stat);
  std::string label;
  double v[8] = {};
  if (!(stat >> label) || label != "cpu") return std::nullopt;
  for (double& x : v) {
    if (!(stat >> x)) return std::nullopt;
  }
  for (double x : v) t.all += x;
  t.busy = t.all - v[3] - v[4];  // less idle and iowait
  std::ifstream self(self_stat);
  std::string line;
  if (!std::getline(self, line)) return std::nullopt;
  const auto paren = line.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(paren + 1));
  std::string field;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) t.self = std::atof(field.c_str());
    if (i == 15) {
      t.self += std::atof(field.c_str());
      return t;
    }
  }
  return std::nullopt;
}

/// The "some" line's total (microseconds in which at least one task waited
/// for a core, averaged over the cores) of a pressure file:
/// "some avg10=0.00 avg60=0.00 avg300=0.00 total=1234". A kernel built
/// without it, or booted with psi=0, has no file or fails the read.
std::optional<double> cpu_wait_total_us(const std::string& pressure) {
  std::ifstream in(pressure);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("some ", 0) != 0) continue;
    const auto at = line.find("total=");
    if (at == std::string::npos) return std::nullopt;
    char* end = nullptr;
    const double us = std::strtod(line.c_str() + at + 6, &end);
    if (end == line.c_str() + at + 6 || us < 0) return std::nullopt;
    return us;
  }
  return std::nullopt;
}

/// The pressure total and when it was read.
struct WaitReading {
  double total_us = 0;
  std::chrono::steady_clock::time_point at;
};

std::optional<WaitReading> read_wait(const std::string& pressure) {
  const auto at = std::chrono::steady_clock::now();
  const auto total = cpu_wait_total_us(pressure);
  if (!total) return std::nullopt;
  return WaitReading{*total, at};
}

class CpuClockReader final : public ClockReader {
 public:
  CpuClockReader(std::vector<std::string> cpufreq, std::string cpuinfo, std::string proc_stat, std::string self_stat,
                 std::string pressure)
      : cpufreq_(std::move(cpufreq)), cpuinfo_(std::move(cpuinfo)), proc_stat_(std::move(proc_stat)),
        self_stat_(std::move(self_stat)), pressure_(std::move(pressure)),
        source_(cpufreq_.empty() ? "/proc/cpuinfo" : "cpufreq") {
    restart();
  }

  const std::string& source() const override { return source_; }

  Result<ClockSample> read() override {
    ClockSample s;
    const auto now = cpu_times(proc_stat_, self_stat_);
    if (now && last_ && now->all > last_->all) {
      s.cpu_ticks = now->all - last_->all;
      s.other_cpu_ticks = std::clamp((now->busy - last_->busy) - (now->self - last_->self), 0.0, s.cpu_ticks);
    }
    last_ = now;
    const auto wait = read_wait(pressure_);
    if (wait && last_wait_ && wait->total_us >= last_wait_->total_us && wait->at > last_wait_->at) {
      s.wall_us = std::chrono::duration<double, std::micro>(wait->at - last_wait_->at).count();
      s.cpu_wait_us = std::min(wait->total_us - last_wait_->total_us, s.wall_us);
    }
    last_wait_ = wait;
    s.core_mhz = cpufreq_.empty() ? mean_cpuinfo_mhz(cpuinfo_) : mean_cpufreq_mhz(cpufreq_);
    if (s.core_mhz <= 0) {
      return Error{ErrorCode::kNotFound,
                   "no CPU frequency in " + (cpufreq_.empty() ? cpuinfo_ : cpufreq_.front()), {}};
    }
    return s;
  }

  void restart() override {
    last_ = cpu_times(proc_stat_, self_stat_);
    last_wait_ = read_wait(pressure_);
  }

 private:
  std::vector<std::string> cpufreq_;
  std::string cpuinfo_, proc_stat_, self_stat_, pressure_;
  std::string source_;
  std::optional<CpuTimes> last_;  ///< at the previous reading or restart
  std::optional<WaitReading> last_wait_;  ///< likewise
};

}  // namespace

Result<std::unique_ptr<ClockReader>> make_cpu_clock_reader(const std::string& cpu_dir, const std::string& cpuinfo,
                                                           const std::string& proc_stat, const std::string& self_stat,
                                                           const std::string& pressure) {
  std::vector<std::string> files = cpufreq_files(cpu_dir);
  if (!files.empty() && mean_cpufreq_mhz(files) > 0) {
    return std::unique_ptr<ClockReader>(
        std::make_unique<CpuClockReader>(std::move(files), cpuinfo, proc_stat, self_stat, pressure));
  }
  if (mean_cpuinfo_mhz(cpuinfo) > 0) {
    return std::unique_ptr<ClockReader>(
        std::make_unique<CpuClockReader>(std::vector<std::string>{}, cpuinfo, proc_stat, self_stat, pressure));
  }
  return Error::not_found("no CPU clock: neither " + cpu_dir + "/cpu*/cpufreq/scaling_cur_freq nor \"cpu MHz\" in " +
                          cpuinfo);
}

}  // namespace kforge
