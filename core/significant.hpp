// A double as the progress lines and tables print it: `precision`
// significant digits, as an ostream would (1.5, 0.0123, 1.235e+06).
#pragma once

#include <sstream>
#include <string>

namespace kforge {

inline std::string significant(double v, int precision = 4) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

}  // namespace kforge
