// PerfCounters: perf_event_open(2) per thread, read with the enabled and
// running times so that multiplexed events are scaled.
#include "runtime/profiling/perf_counters.hpp"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

namespace kforge {
namespace {

struct EventKind {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
  const char* unit;
};

constexpr std::uint64_t cache_event(std::uint64_t cache, std::uint64_t op, std::uint64_t result) {
  return cache | (op << 8) | (result << 16);
}

// perf(1)'s names for the same events.
const std::array<EventKind, 6> kEvents = {{
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, "cycle"},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, "instruction"},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, "event"},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, "event"},
    {"LLC-loads", PERF_TYPE_HW_CACHE,
     cache_event(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS),
     "event"},
    {"LLC-load-misses", PERF_TYPE_HW_CACHE,
     cache_event(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS),
     "event"},
}};

int open_event(const EventKind& kind, pid_t tid) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = kind.type;
  attr.config = kind.config;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC));
}

std::string paranoid_level() {
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  return in >> level ? level : "unknown";
}

/// Why events could not be opened, from the errno of the failed call.
std::string reason_for(int err) {
  const std::string call = std::string("perf_event_open: ") + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENODEV:
    case EOPNOTSUPP:
      return "no CPU PMU (" + call + ")";
    case EACCES:
    case EPERM:
      return "not permitted (" + call + "; kernel.perf_event_paranoid is " + paranoid_level() + ")";
    default:
      return "cannot count (" + call + ")";
  }
}

std::vector<pid_t> process_threads() {
  std::vector<pid_t> tids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    tids.push_back(static_cast<pid_t>(std::stol(e.path().filename().string())));
  }
  if (tids.empty()) tids.push_back(0);
  return tids;
}

}  // namespace

std::string PerfCounters::unavailable_reason() {
  const int fd = open_event(kEvents[0], 0);
  if (fd < 0) return reason_for(errno);
  close(fd);
  return {};
}

Result<PerfCounters> PerfCounters::open() {
  std::vector<Event> events;
  auto fail = [&](int err) {
    for (const Event& e : events) close(e.fd);
    return Error{ErrorCode::kUnsupported, reason_for(err), {}};
  };
  for (pid_t tid : process_threads()) {
    for (std::size_t k = 0; k < kEvents.size(); ++k) {
      const int fd = open_event(kEvents[k], tid);
      if (fd >= 0) {
        events.push_back({fd, static_cast<int>(k)});
      } else if (errno != ESRCH) {  // a thread that ended meanwhile counts nothing
        return fail(errno);
      }
    }
  }
  return PerfCounters(std::move(events));
}

PerfCounters::PerfCounters(PerfCounters&& o) noexcept : events_(std::move(o.events_)) {
  o.events_.clear();
}

PerfCounters::~PerfCounters() {
  for (const Event& e : events_) close(e.fd);
}

Status PerfCounters::start() {
  for (const Event& e : events_) {
    if (ioctl(e.fd, PERF_EVENT_IOC_RESET, 0) != 0 || ioctl(e.fd, PERF_EVENT_IOC_ENABLE, 0) != 0) {
      return Error{
          ErrorCode::kUnsupported, std::string("perf_event_open: enable: ") + std::strerror(errno), {}};
    }
  }
  return ok_status();
}

Result<std::vector<CounterReading>> PerfCounters::stop() {
  std::array<double, kEvents.size()> sums{};
  for (const Event& e : events_) {
    ioctl(e.fd, PERF_EVENT_IOC_DISABLE, 0);
    std::uint64_t v[3] = {0, 0, 0};  // value, time enabled, time running
    if (read(e.fd, v, sizeof v) != static_cast<ssize_t>(sizeof v)) {
      return Error{
          ErrorCode::kUnsupported, std::string("perf_event_open: read: ") + std::strerror(errno), {}};
    }
    const double scale = v[2] > 0 ? static_cast<double>(v[1]) / static_cast<double>(v[2]) : 0.0;
    sums[static_cast<std::size_t>(e.kind)] += static_cast<double>(v[0]) * scale;
  }
  std::vector<CounterReading> out;
  for (std::size_t k = 0; k < kEvents.size(); ++k) out.push_back({kEvents[k].name, sums[k], kEvents[k].unit});
  return out;
}

CounterCollection collect_perf(const std::function<Status()>& launch) {
  const std::string tool = "perf_event_open";
  auto counters = PerfCounters::open();
  if (!counters.ok()) return CounterCollection::none("perf", counters.error().message);
  CounterCollection c{"perf", tool, {}, {}};
  if (Status st = counters->start(); !st.ok()) return CounterCollection::none("perf", st.error().message);
  const Status launched = launch();
  auto readings = counters->stop();
  if (!launched.ok())
    return CounterCollection::none("perf", "the launch failed: " + launched.error().message);
  if (!readings.ok()) return CounterCollection::none("perf", readings.error().message);
  c.readings = std::move(*readings);
  return c;
}

}  // namespace kforge
