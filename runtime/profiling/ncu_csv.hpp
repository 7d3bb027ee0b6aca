// Reads what `ncu --csv --page raw` prints (Nsight Compute's raw page): a
// header record naming the columns (ID, Process ID, Process Name, Host Name,
// Kernel Name, Context, Stream, Block Size, Grid Size, Device, CC, then one
// column per metric), a record of units, and one record per profiled
// kernel launch. Values may carry thousands separators ("1,048,576") and
// read "n/a" where a metric does not apply; ncu's own "==PROF==" lines and
// the program's output may come before the header.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "runtime/profiling/counter_collection.hpp"

namespace kforge {

struct NcuKernelRow {
  std::string id;           ///< ncu's launch ID
  std::string kernel_name;  ///< as ncu names it (demangled)
  /// Every metric column with a value, in column order; units brought to a
  /// base (Mbyte -> byte, usecond -> nsecond), n/a left out.
  std::vector<CounterReading> readings;
};

/// The launches in `text`; `source` (a file name, "ncu output") names where
/// errors point. kBadInput naming the line and the column for a record
/// whose field count differs from the header's or a value that is not a
/// number; kNotFound when no header is there (with ncu's first ==ERROR== line).
Result<std::vector<NcuKernelRow>> parse_ncu_raw_csv(std::string_view text, const std::string& source);

/// One CSV record (RFC 4180 quoting, no embedded line breaks).
std::vector<std::string> split_csv_record(std::string_view line);

}  // namespace kforge
