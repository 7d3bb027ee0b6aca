// Moved counters (report/counter_moves.hpp): what `compare` names beside a
// time that moved, outside a 10 % band (5 points for a percentage).
#include "report/counter_moves.hpp"

#include <catch2/catch.hpp>

using namespace kforge;
using namespace kforge::report;

namespace {

CounterRecord row(const std::string& name, double value, const std::string& unit,
                  const std::string& source = "ncu") {
  CounterRecord r;
  r.source = source;
  r.collector = source == "unavailable" ? "ncu" : source;
  r.name = name;
  if (source != "unavailable") r.value = value;
  r.unit = unit;
  return r;
}

}  // namespace

TEST_CASE("counters that left their noise band are named, largest first", "[counters][compare]") {
  const std::vector<CounterRecord> before = {
      row("dram__bytes_read.sum", 100e6, "byte"), row("lts__t_sector_hit_rate.pct", 80, "%"),
      row("sm__warps_active.avg.pct_of_peak_sustained_active", 50, "%"),
      row("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", 1000, ""),
      row("model_bytes", 1, "byte", "model")};
  const std::vector<CounterRecord> after = {
      row("dram__bytes_read.sum", 142e6, "byte"), row("lts__t_sector_hit_rate.pct", 67.7, "%"),
      row("sm__warps_active.avg.pct_of_peak_sustained_active", 53, "%"),    // 3 points: noise
      row("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", 1050, ""),  // 5 %: noise
      row("model_bytes", 9, "byte", "model")};
  const auto moves = moved_counters(before, after);
  REQUIRE(moves.size() == 2);
  CHECK(moves[0].name == "dram__bytes_read.sum");  // 4.2 bands out, the L2 rate 2.5
  CHECK(moves[0].change == Approx(0.42));
  CHECK(moves[1].name == "lts__t_sector_hit_rate.pct");
  CHECK(moves[1].change == Approx(-12.3));
  CHECK(moves_text(moves) ==
        "dram__bytes_read.sum +42% (1e+08 -> 1.42e+08 byte), lts__t_sector_hit_rate.pct -12.3 points");
}

TEST_CASE("a counter on one side only, or unavailable, does not move", "[counters][compare]") {
  const std::vector<CounterRecord> before = {row("dram__bytes_read.sum", 1, "byte"),
                                             row("availability", 0, "", "unavailable")};
  const std::vector<CounterRecord> after = {row("dram__bytes_write.sum", 5, "byte")};
  CHECK(moved_counters(before, after).empty());
  CHECK(moves_text({}).empty());
}
