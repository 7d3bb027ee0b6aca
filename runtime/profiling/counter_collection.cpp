// CounterCollection to database rows.
#include "runtime/profiling/counter_collection.hpp"

namespace kforge {

std::vector<CounterRecord> counter_rows(const CounterCollection& c, std::int64_t result_id) {
  std::vector<CounterRecord> rows;
  auto row = [&] {
    CounterRecord& r = rows.emplace_back();
    r.result_id = result_id;
    r.collector = c.collector;
    r.tool = c.tool;
    return &r;
  };
  if (!c.available() || c.readings.empty()) {
    CounterRecord* r = row();
    r->source = "unavailable";
    r->name = "availability";
    r->note = c.available() ? "unavailable: " + c.collector + " read no counter" : c.unavailable;
    return rows;
  }
  for (const CounterReading& reading : c.readings) {
    CounterRecord* r = row();
    r->source = c.collector;
    r->name = reading.name;
    r->value = reading.value;
    r->unit = reading.unit;
  }
  return rows;
}

nlohmann::json to_json(const CounterCollection& c) {
  nlohmann::json readings = nlohmann::json::array();
  for (const auto& r : c.readings)
    readings.push_back({{"name", r.name}, {"value", r.value}, {"unit", r.unit}});
  return {
      {"collector", c.collector}, {"tool", c.tool}, {"unavailable", c.unavailable}, {"readings", readings}};
}

CounterCollection collection_from_json(const nlohmann::json& j, const std::string& collector) {
  try {
    CounterCollection c{
        j.at("collector").get<std::string>(), j.value("tool", ""), j.value("unavailable", ""), {}};
    for (const auto& r : j.at("readings")) {
      c.readings.push_back(
          {r.at("name").get<std::string>(), r.at("value").get<double>(), r.value("unit", "")});
    }
    return c;
  } catch (const nlohmann::json::exception& e) {
    return CounterCollection::none(collector,
                                   std::string("the profiling process's report does not parse: ") + e.what());
  }
}

}  // namespace kforge
