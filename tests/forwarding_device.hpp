// A Device that forwards every call to a real one: tests derive from it and
// override the one call they change (the compiler, the clock reader, a
// failing launch).
#pragma once

#include <memory>
#include <vector>

#include "runtime/device/backend.hpp"

namespace kforge::test {

class ForwardingDevice : public Device {
 public:
  explicit ForwardingDevice(Device& inner) : inner_(inner) {}
  const DeviceInfo& info() const override { return inner_.info(); }
  Compiler& compiler() override { return inner_.compiler(); }
  Result<std::unique_ptr<Kernel>> load(const CompiledKernel& c) override { return inner_.load(c); }
  Result<std::unique_ptr<Buffer>> allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  Status write(Buffer& dst, const void* src, std::size_t n) override { return inner_.write(dst, src, n); }
  Status read(const Buffer& src, void* dst, std::size_t n) override { return inner_.read(src, dst, n); }
  Result<double> launch(Kernel& k, const std::vector<KernelArg>& args, const LaunchGeometry& g,
                        const OnRunning& on_running = {}) override {
    return inner_.launch(k, args, g, on_running);
  }
  Status enqueue(Kernel& k, const std::vector<KernelArg>& args, const LaunchGeometry& g) override {
    return inner_.enqueue(k, args, g);
  }
  Status synchronize() override { return inner_.synchronize(); }
  Status flush_cache() override { return inner_.flush_cache(); }
  CacheFlush cache_flush() const override { return inner_.cache_flush(); }
  ClockReader* clock_reader() override { return inner_.clock_reader(); }

 protected:
  Device& inner_;
};

}  // namespace kforge::test
