// Calling a user's reference library: arguments marshalled into the C ABI,
// its return value checked.
#include "library_reference.hpp"

#include "kforge_reference.h"

namespace kforge {

Result<std::shared_ptr<const LibraryReference>> LibraryReference::open(const std::string& path,
                                                                       const std::string& symbol,
                                                                       const std::string& declaration) {
  std::shared_ptr<LibraryReference> r(new LibraryReference());
  auto lib = DynamicLibrary::open("reference library", {path});
  if (!lib.ok())
    return Error::bad_input(declaration + ": reference.library: '" + path + "': " + lib.error().message);
  r->library_ = std::move(*lib);
  auto fn = r->library_.symbol(symbol);
  if (!fn.ok()) {
    return Error::bad_input(declaration + ": reference.symbol: '" + symbol + "' is not exported by " + path);
  }
  r->fn_ = *fn;
  r->symbol_ = symbol;
  return std::shared_ptr<const LibraryReference>(std::move(r));
}

std::string LibraryReference::describe() const {
  return "library " + library_.path() + " symbol " + symbol_;
}

Status LibraryReference::compute(const Problem& p, std::vector<ReferenceArgument>& args) const {
  std::vector<kforge_ref_dim> dims;
  for (const auto& [name, value] : p.dims) dims.push_back({name.c_str(), value});
  std::vector<std::string> dtypes;
  dtypes.reserve(args.size());
  std::vector<kforge_ref_arg> c_args;
  for (auto& a : args) {
    const DeclaredArgument& d = *a.declared;
    dtypes.emplace_back(dtype_name(a.dtype));
    kforge_ref_arg c{};
    c.name = d.name.c_str();
    c.type = d.type == ArgumentType::kBuffer  ? KFORGE_REF_BUFFER
             : d.type == ArgumentType::kInt32 ? KFORGE_REF_I32
                                              : KFORGE_REF_F32;
    c.role = d.role == BufferRole::kOut     ? KFORGE_REF_OUT
             : d.role == BufferRole::kInOut ? KFORGE_REF_INOUT
                                            : KFORGE_REF_IN;
    c.dtype = dtypes.back().c_str();
    c.count = d.type == ArgumentType::kBuffer ? a.data.size() : 0;
    c.data = d.type == ArgumentType::kBuffer ? a.data.data() : nullptr;
    c.value = a.value;
    c_args.push_back(c);
  }
  const std::string op = p.op, dtype(dtype_name(p.dtype));
  kforge_ref_problem problem{KFORGE_REFERENCE_ABI_VERSION,
                             op.c_str(),
                             dtype.c_str(),
                             static_cast<int>(dims.size()),
                             dims.data(),
                             static_cast<int>(c_args.size()),
                             c_args.data()};
  const int rc = reinterpret_cast<kforge_reference_fn>(fn_)(&problem);
  if (rc != 0) {
    return Error::bad_input("reference (" + describe() + ") for " + p.key() + " returned " +
                            std::to_string(rc));
  }
  return ok_status();
}

}  // namespace kforge
