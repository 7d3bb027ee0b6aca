// A stand-in for libnvidia-ml.so.1, built only for tests and loaded through
// KFORGE_NVML_LIBRARY, so the NVML clock reader runs without an NVIDIA GPU.
// It knows one GPU and answers from a script file named by
// KFORGE_FAKE_NVML_SCRIPT, read again whenever a device handle is taken:
//
//   device GPU-1234 0000:17:00.0     the GPU's UUID and PCI bus id
//   sample SM MEM TEMP_C POWER_MW REASONS_HEX [PROCESSES]
//   sample ...                       one line per reading; the last repeats
//
// PROCESSES (default 1) is what nvmlDeviceGetComputeRunningProcesses_v3
// counts: processes with a compute context on the GPU.
//
// Each nvmlDeviceGetClockInfo(SM) call moves to the next sample (the reader
// asks for the SM clock first). Built with KFORGE_FAKE_NVML_LEGACY it exports
// only the pre-R535 nvmlDeviceGetCurrentClocksThrottleReasons, and no
// process count.
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "tests/runtime/fake_script.hpp"

namespace {

struct Sample {
  unsigned sm = 0, mem = 0, temp = 0, power_mw = 0;
  unsigned long long reasons = 0;
  unsigned processes = 1;
};

struct Script {
  std::string uuid, bus_id;
  std::vector<Sample> samples;
  std::size_t next = 0;
  const Sample* current = nullptr;
};

Script script;
bool initialized = false;

constexpr int kSuccess = 0, kUninitialized = 1, kInvalidArgument = 2, kNotFound = 6, kInsufficientSize = 7;

bool load_script() {
  script = Script{};
  kforge::test::for_each_script_line("KFORGE_FAKE_NVML_SCRIPT", [](const std::string& kind, std::istringstream& words) {
    if (kind == "device") {
      words >> script.uuid >> script.bus_id;
    } else if (kind == "sample") {
      Sample s;
      words >> s.sm >> s.mem >> s.temp >> s.power_mw >> std::hex >> s.reasons >> std::dec;
      if (unsigned processes = 0; words >> processes) s.processes = processes;
      script.samples.push_back(s);
    }
  });
  return !script.uuid.empty();
}

/// The one device handle this library hands out.
struct nvmlDevice_st {};
nvmlDevice_st the_device;

int check(nvmlDevice_st* d) {
  if (!initialized) return kUninitialized;
  return d == &the_device && !script.samples.empty() ? kSuccess : kInvalidArgument;
}

const Sample& current() { return script.current ? *script.current : script.samples.front(); }

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int nvmlInit_v2() {
  initialized = true;
  return kSuccess;
}

__attribute__((visibility("default"))) const char* nvmlErrorString(int r) {
  switch (r) {
    case kSuccess: return "Success";
    case kUninitialized: return "Uninitialized";
    case kInvalidArgument: return "Invalid Argument";
    case kNotFound: return "Not Found";
    default: return "Unknown Error";
  }
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_st** device) {
  if (!initialized) return kUninitialized;
  if (!load_script() || script.uuid != uuid) return kNotFound;
  *device = &the_device;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetHandleByPciBusId_v2(const char* bus_id,
                                                                           nvmlDevice_st** device) {
  if (!initialized) return kUninitialized;
  if (!load_script() || script.bus_id != bus_id) return kNotFound;
  *device = &the_device;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetClockInfo(nvmlDevice_st* d, int type, unsigned* mhz) {
  if (int r = check(d); r != kSuccess) return r;
  if (type == 1) {  // SM: the next reading
    script.current = &script.samples[std::min(script.next, script.samples.size() - 1)];
    ++script.next;
    *mhz = current().sm;
    return kSuccess;
  }
  if (type == 2) {
    *mhz = current().mem;
    return kSuccess;
  }
  return kInvalidArgument;
}

__attribute__((visibility("default"))) int nvmlDeviceGetTemperature(nvmlDevice_st* d, int sensor, unsigned* c) {
  if (int r = check(d); r != kSuccess) return r;
  if (sensor != 0) return kInvalidArgument;
  *c = current().temp;
  return kSuccess;
}

__attribute__((visibility("default"))) int nvmlDeviceGetPowerUsage(nvmlDevice_st* d, unsigned* milliwatts) {
  if (int r = check(d); r != kSuccess) return r;
  *milliwatts = current().power_mw;
  return kSuccess;
}

#ifdef KFORGE_FAKE_NVML_LEGACY
__attribute__((visibility("default"))) int nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_st* d,
                                                                                     unsigned long long* reasons) {
#else
__attribute__((visibility("default"))) int nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_st* d,
                                                                                  unsigned long long* reasons) {
#endif
  if (int r = check(d); r != kSuccess) return r;
  *reasons = current().reasons;
  return kSuccess;
}

#ifndef KFORGE_FAKE_NVML_LEGACY
// With room for none, the count: as NVML answers a count query.
__attribute__((visibility("default"))) int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_st* d, unsigned* count,
                                                                                  void* infos) {
  if (int r = check(d); r != kSuccess) return r;
  const unsigned n = current().processes;
  if (n == 0) {
    *count = 0;
    return kSuccess;
  }
  if (*count < n || !infos) {
    *count = n;
    return kInsufficientSize;
  }
  return kInvalidArgument;  // the reader never asks for the records
}
#endif

}  // extern "C"
