// An Operator whose contract is data (operator.json, OperatorDeclaration):
// a user's kernel is tuned, validated and looked up like a built-in's.
#pragma once

#include <map>
#include <memory>

#include "generator/external_reference.hpp"
#include "generator/npy_file.hpp"
#include "generator/operator.hpp"
#include "generator/operator_declaration.hpp"

namespace kforge {

class DeclaredOperator final : public Operator {
 public:
  /// Reads the declaration's .npy files; `external` computes a library
  /// reference (nullptr when the declaration's reference is expected outputs).
  static Result<std::shared_ptr<const DeclaredOperator>> create(
      OperatorDeclaration declaration, std::shared_ptr<const ExternalReference> external);

  const OperatorDeclaration& declaration() const { return decl_; }
  /// What validates this operator: the library and symbol, the expected
  /// files, or the reference template and configuration.
  std::string reference_description() const;
  /// The reference of output values computed elsewhere (a reference
  /// template, on the device), concatenated in argument order, with each
  /// element's declared threshold. Checks the values as a library's are.
  Result<Reference> reference_from(const Problem& p, std::vector<double> values) const;

  std::string_view name() const override { return decl_.name; }
  std::vector<std::string> dims() const override;
  std::map<std::string, std::int64_t> default_dims() const override { return decl_.default_problem; }
  Result<Problem> normalize(Problem p) const override;
  std::vector<std::string> extra_names() const override;
  std::vector<AttributeSpec> attributes() const override { return decl_.attributes; }
  bool fixed_data() const override { return !arrays_.empty(); }
  void add_to(Env& env, const Problem& p) const override;
  double flops(const Problem& p) const override;
  double bytes(const Problem& p) const override;
  Workload make_workload(const Problem& p, std::uint64_t seed, WorkloadKind kind) const override;
  std::vector<ArgumentSpec> arguments(const Problem& p) const override;
  Reference reference(const Problem& p, const Workload& w) const override;
  Result<std::vector<Reference>> try_references(const Problem& p,
                                                const std::vector<const Workload*>& ws) const override;

 private:
  DeclaredOperator(OperatorDeclaration d, std::shared_ptr<const ExternalReference> external)
      : decl_(std::move(d)), external_(std::move(external)) {}
  Env env_of(const Problem& p) const;
  /// The element count of a buffer for a problem normalize accepted.
  std::uint64_t count_of(const DeclaredArgument& a, const Env& env) const;
  Result<std::vector<double>> reference_outputs(const Problem& p, const Workload& w) const;

  OperatorDeclaration decl_;
  std::shared_ptr<const ExternalReference> external_;
  std::map<std::string, NpyArray> arrays_;  ///< by resolved file path
};

}  // namespace kforge
