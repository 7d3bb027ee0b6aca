// Small helpers shared by tests.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

namespace kforge::test {

/// A fresh empty directory under the system temp dir, removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("kforge-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// An environment variable set to `value` while the object lives; its earlier
/// value (or its absence) is restored after.
class ScopedEnv {
 public:
  ScopedEnv(std::string var, const std::string& value) : var_(std::move(var)) {
    if (const char* old = std::getenv(var_.c_str())) old_ = old;
    setenv(var_.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) setenv(var_.c_str(), old_->c_str(), 1);
    else unsetenv(var_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string var_;
  std::optional<std::string> old_;
};

/// A text file whose path is in the environment variable `var` while the
/// object lives: how tests script the fake vendor libraries (fake_nvml.cpp,
/// fake_rocm_smi.cpp), which read the file named there.
class ScopedScriptFile {
 public:
  ScopedScriptFile(std::string var, const std::string& text) : var_(std::move(var)) {
    write_file(dir_.file("script"), text);
    setenv(var_.c_str(), dir_.file("script").c_str(), 1);
  }
  ~ScopedScriptFile() { unsetenv(var_.c_str()); }
  ScopedScriptFile(const ScopedScriptFile&) = delete;
  ScopedScriptFile& operator=(const ScopedScriptFile&) = delete;

 private:
  std::string var_;
  TempDir dir_;
};

}  // namespace kforge::test
