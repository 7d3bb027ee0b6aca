// Several instances of one template, for one problem, as one translation
// unit: one program that holds every instance's kernel.
//
// Why: PoCL parses its OpenCL C header and sets up a front end for every
// program it builds, about 0.2-0.25 s of one core whatever the kernel
// (a GEMM instance's whole build takes 0.26-0.35 s), while the machine code
// is generated per kernel at its first launch either way. Eight GEMM
// instances built as one program took 0.56 s instead of 2.05 s, and their
// first launches about the same time as built apart (bench/combined_programs.py;
// docs/measurement.md, "Combined programs").
//
// Each instance keeps its own text, in order, with the macro state it would
// have alone: after it, every macro its own lines or the template define is
// undefined again, and the template's file-scope functions are renamed per
// instance (a `#define` of the name), so the next instance starts as if it
// were first. The prelude is included once (its include guard skips the
// copies); a template that defines or undefines one of the prelude's macros
// would change what later instances see, so it is not combined.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"
#include "generator/instance.hpp"
#include "generator/template_source.hpp"

namespace kforge {

/// The names of the macros `text` defines or undefines (`#define NAME`,
/// `#undef NAME`, in any branch of a conditional).
std::vector<std::string> macro_names(std::string_view text);

/// The names of the functions `text` defines at file scope (an identifier,
/// its parenthesized parameters, then a body), comments and preprocessor
/// lines aside.
std::vector<std::string> file_scope_functions(std::string_view text);

/// One translation unit holding `instances` (at least one, all of template
/// `tpl`, each made by instantiate() with `prelude`), each kernel under its
/// own instance's kernel name. An error says why the template's instances
/// cannot share a program; they are then built one program each.
Result<std::string> combine_instances(const TemplateSource& tpl, std::string_view prelude,
                                      const std::vector<const Instance*>& instances);

}  // namespace kforge
