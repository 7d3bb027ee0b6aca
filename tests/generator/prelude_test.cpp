// The backend preludes share one epilogue (templates/prelude/epilogue.h):
// each prelude_text() ends with it, and it names every activation by the
// value the generator writes into KF_ACTIVATION.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <string>

#include "generator/problem.hpp"
#include "generator/reserved_names.hpp"
#include "templates/builtin_templates.hpp"

using namespace kforge;

namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string_view embedded(std::string_view path) {
  for (const auto& f : embedded_template_files())
    if (f.path == path) return f.text;
  return {};
}

}  // namespace

TEST_CASE("every backend prelude ends with the shared epilogue", "[templates][prelude]") {
  const std::string_view epilogue = embedded("prelude/epilogue.h");
  REQUIRE_FALSE(epilogue.empty());
  for (const char* backend : {"opencl", "cuda", "hip"}) {
    INFO(backend);
    const std::string_view own = embedded("prelude/" + std::string(backend) + ".h");
    REQUIRE_FALSE(own.empty());
    const std::string_view prelude = prelude_text(backend);
    CHECK(prelude.starts_with(own));
    CHECK(prelude.ends_with(epilogue));
    // The backend's own file leaves the epilogue to the shared one.
    CHECK(own.find("kf_activation") == std::string_view::npos);
  }
  CHECK(prelude_text("epilogue").empty());
  CHECK(prelude_text("vulkan").empty());
}

TEST_CASE("the shared epilogue names each activation by the generator's value", "[templates][prelude]") {
  const std::string_view epilogue = embedded("prelude/epilogue.h");
  for (Activation a : {Activation::kNone, Activation::kRelu, Activation::kGelu, Activation::kSilu}) {
    const std::string line = "#define KF_ACTIVATION_" + upper(activation_name(a)) + " " +
                             std::to_string(static_cast<int>(a)) + "\n";
    INFO(line);
    CHECK(epilogue.find(line) != std::string_view::npos);
  }
  // Compared by name only: no `KF_ACTIVATION == <number>` left.
  CHECK(epilogue.find("KF_ACTIVATION == 1") == std::string_view::npos);
  CHECK(epilogue.find("KF_ACTIVATION == KF_ACTIVATION_RELU") != std::string_view::npos);
}

TEST_CASE("every macro a backend prelude defines is reserved from attributes", "[templates][prelude]") {
  // An attribute's KF_<NAME> must not redefine one of these (reserved_names.cpp).
  const auto& reserved = prelude_macros();
  for (const char* backend : {"opencl", "cuda", "hip"}) {
    const std::string_view prelude = prelude_text(backend);
    REQUIRE_FALSE(prelude.empty());
    for (std::size_t at = prelude.find("#define KF_"); at != std::string_view::npos;
         at = prelude.find("#define KF_", at + 1)) {
      std::size_t begin = at + 8, end = begin;
      while (end < prelude.size() && (std::isalnum(static_cast<unsigned char>(prelude[end])) || prelude[end] == '_'))
        ++end;
      const std::string_view macro = prelude.substr(begin, end - begin);
      INFO(backend << ": " << macro);
      CHECK(std::find(reserved.begin(), reserved.end(), macro) != reserved.end());
    }
  }
}
