// Clocks of the host CPU, for CPU OpenCL devices (PoCL): the kernel runs on
// the host's cores, so their current frequency is the device's clock.
#pragma once

#include <memory>
#include <string>

#include "clock_reader.hpp"
#include "result.hpp"

namespace kforge {

/// A reader of the mean current frequency over every core: each core's
/// cpufreq/scaling_cur_freq (kHz) under `cpu_dir` when the kernel exposes
/// cpufreq, else the "cpu MHz" lines of `cpuinfo` (virtual machines often
/// have only these). The source is chosen once, here: kNotFound when neither
/// gives a number. Only core_mhz is filled: the host offers no portable,
/// unprivileged way to tell throttling from a governor's choice, so samples
/// are never marked throttled from a guess (reasons_known stays false).
Result<std::unique_ptr<ClockReader>> make_cpu_clock_reader(const std::string& cpu_dir = "/sys/devices/system/cpu",
                                                           const std::string& cpuinfo = "/proc/cpuinfo");

}  // namespace kforge
