// Ordering named launch arguments by the operator's contract.
#include "runtime/lookup/named_arguments.hpp"

#include "core/printable.hpp"

namespace kforge {

Result<std::vector<KernelArg>> order_named_arguments(std::string_view op,
                                                     const std::vector<ArgumentSpec>& contract,
                                                     const std::vector<NamedArg>& named) {
  const std::string who = "launch " + std::string(op);
  std::string takes;
  for (const auto& c : contract) takes += (takes.empty() ? "" : ", ") + c.name;
  std::vector<const KernelArg*> slot(contract.size(), nullptr);
  for (const auto& n : named) {
    std::size_t i = 0;
    while (i < contract.size() && contract[i].name != n.name) ++i;
    if (i == contract.size()) {
      return Error::bad_input(who + ": no argument named '" + printable(n.name) + "' (" + std::string(op) +
                              " takes " + takes + ")");
    }
    if (slot[i]) return Error::bad_input(who + ": argument '" + n.name + "' is given twice");
    slot[i] = &n.arg;
  }
  std::vector<KernelArg> ordered;
  for (std::size_t i = 0; i < contract.size(); ++i) {
    if (!slot[i])
      return Error::bad_input(who + ": argument '" + contract[i].name + "' is missing (" + takes + ")");
    ordered.push_back(*slot[i]);
  }
  return ordered;
}

}  // namespace kforge
