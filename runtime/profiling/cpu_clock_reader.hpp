// Clocks of the host CPU, for CPU OpenCL devices (PoCL): the kernel runs on
// the host's cores, so their current frequency is the device's clock, and
// other processes' use of them is what slows it down besides.
#pragma once

#include <memory>
#include <string>

#include "core/result.hpp"
#include "runtime/profiling/clock_reader.hpp"

namespace kforge {

/// A reader of the mean current frequency over every core: each core's
/// cpufreq/scaling_cur_freq (kHz) under `cpu_dir` when the kernel exposes
/// cpufreq, else the "cpu MHz" lines of `cpuinfo` (virtual machines often
/// have only these). The source is chosen once, here: kNotFound when neither
/// gives a number. The host offers no portable, unprivileged way to tell
/// throttling from a governor's choice, so samples are never marked
/// throttled from a guess (reasons_known stays false). Each reading also
/// counts the host's CPU time since the previous one and how much of it
/// processes other than this one used (ClockSample::cpu_ticks,
/// other_cpu_ticks): `proc_stat`'s aggregate "cpu" line against
/// `self_stat`'s utime and stime, the kernel's threads included; both -1
/// where either file does not read. And the time tasks waited for a core
/// since then (ClockSample::cpu_wait_us, wall_us): the "some" line's total
/// in `pressure`, -1 where the kernel keeps no pressure stall information.
Result<std::unique_ptr<ClockReader>> make_cpu_clock_reader(const std::string& cpu_dir = "/sys/devices/system/cpu",
                                                           const std::string& cpuinfo = "/proc/cpuinfo",
                                                           const std::string& proc_stat = "/proc/stat",
                                                           const std::string& self_stat = "/proc/self/stat",
                                                           const std::string& pressure = "/proc/pressure/cpu");

}  // namespace kforge
