"""A triton template's manifest (templates/triton/<name>/manifest.json):
loading, checking (errors name the file, the field and the value), and
turning a configuration and a problem into the compile helper's request
and the kernel's launch (grid and argument values). docs/triton.md.

The fields mirror the C++ templates' manifests (generator/manifest.cpp)
where they mean the same: schema_version, name, operator, description,
source, kernel, targets, dtypes, layouts, parameters (name, values,
default, doc), constraints, envelope. Triton's own: kind ("triton"),
arguments (bind, value or workspace), constexprs, options, specialization,
grid.
"""

import ast
import itertools
import json
import os

from .expr import Expr, ExprError
from .protocol import ALL_OPTIONS, BACKEND_OPTIONS, DTYPES, TARGETS

SCHEMA_VERSION = 1

# What each operator gives a template: problem dims, the other names its
# expressions may read, and its arguments (generator/<op>_operator.cpp).
OPERATORS = {
    "gemm": {"dims": ["M", "N", "K", "batch"], "names": ["trans_a", "trans_b", "dtype_bytes", "bias", "activation"],
             "arguments": ["M", "N", "K", "alpha", "A", "B", "beta", "C", "bias"]},
    "rmsnorm": {"dims": ["rows", "cols"], "names": ["dtype_bytes"],
                "arguments": ["rows", "cols", "eps", "X", "W", "Y"]},
    "layernorm": {"dims": ["rows", "cols"], "names": ["dtype_bytes"],
                  "arguments": ["rows", "cols", "eps", "X", "W", "B", "Y"]},
    "softmax": {"dims": ["rows", "cols"], "names": ["dtype_bytes"],
                "arguments": ["rows", "cols", "X", "Y", "partials", "counters"]},
    "attention": {"dims": ["B", "H", "S", "SK", "D"], "names": ["dtype_bytes", "mask"],
                  "arguments": ["B", "H", "S", "SK", "D", "scale", "Q", "K", "V", "O"]},
    "swiglu": {"dims": ["rows", "cols"], "names": ["dtype_bytes"], "arguments": ["rows", "cols", "X", "Y"]},
}
DEVICE_LIMITS = ["max_block_threads", "local_mem_bytes", "max_shared_bytes", "compute_units", "simd_width"]
LAYOUTS = ["NN", "NT", "TN", "TT"]

TOP_FIELDS = ["schema_version", "kind", "name", "operator", "description", "source", "kernel", "targets", "dtypes",
              "layouts", "arguments", "parameters", "constexprs", "options", "specialization", "grid",
              "constraints", "envelope"]
REQUIRED = ["schema_version", "kind", "name", "operator", "source", "kernel", "targets", "dtypes", "arguments",
            "parameters", "grid"]
ARGUMENT_FIELDS = ["name", "type", "bind", "value", "workspace", "zeroed", "doc"]
# Where a kernel argument comes from: exactly one of these per argument.
ARGUMENT_SOURCES = ["bind", "value", "workspace"]
PARAMETER_FIELDS = ["name", "values", "default", "doc", "targets"]
SPECIALIZATION_FIELDS = ["argument", "divisible_by", "when"]
SCALAR_TYPES = ["i32", "i64", "fp32"]
POINTER_TYPES = ["*" + t for t in sorted(set(DTYPES.values()))] + ["*{dtype}"]


class ManifestError(ValueError):
    """"<file>: <field>: <what>"."""


class _Checker:
    def __init__(self, path):
        self.path = path

    def fail(self, field, what):
        return ManifestError(f"{self.path}: {field}: {what}")

    def kind(self, value, types, field, expected):
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in (types if isinstance(types, tuple)
                                                                                     else (types,))):
            raise self.fail(field, f"expected {expected}, got {json.dumps(value)}")
        return value

    def known_keys(self, obj, field, allowed):
        for key in obj:
            if key not in allowed:
                raise self.fail(f"{field}.{key}" if field else key, f"unknown field (known: {', '.join(allowed)})")

    def strings(self, obj, key, allowed=None, required=True):
        if key not in obj:
            if required:
                raise self.fail(key, "missing (required)")
            return []
        value = self.kind(obj[key], list, key, "a list of strings")
        for i, item in enumerate(value):
            self.kind(item, str, f"{key}[{i}]", "a string")
            if allowed is not None and item not in allowed:
                raise self.fail(f"{key}[{i}]", f"'{item}' is not one of {', '.join(allowed)}")
        return value

    def expression(self, text, field, names):
        self.kind(text, str, field, "an expression (a string)")
        try:
            e = Expr(text)
        except ExprError as err:
            raise self.fail(field, f"'{text}': {err}") from None
        unknown = sorted(e.names - set(names))
        if unknown:
            raise self.fail(field, f"'{text}': unknown name {', '.join(unknown)}")
        return e


def kernel_parameters(source_path, kernel):
    """[(name, is_constexpr)] of the @triton.jit function `kernel` in the
    source, read from its syntax tree (nothing is imported)."""
    with open(source_path) as f:
        tree = ast.parse(f.read(), source_path)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == kernel:
            jit = any("jit" in ast.unparse(d) for d in node.decorator_list)
            if not jit:
                raise ValueError(f"'{kernel}' is not decorated with @triton.jit")
            args = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
            return [(a.arg, a.annotation is not None and "constexpr" in ast.unparse(a.annotation)) for a in args]
    raise ValueError(f"defines no function '{kernel}'")


class Manifest:
    """A checked manifest. .data is the JSON; .path, .source_path."""

    def __init__(self, path, data):
        self.path, self.data = path, data
        self.dir = os.path.dirname(os.path.abspath(path))
        self.source_path = os.path.join(self.dir, data["source"])
        op = OPERATORS[data["operator"]]
        self.dims, self.extra_names = op["dims"], op["names"]
        self.parameters = data["parameters"]
        self.arguments = data["arguments"]
        self.constexprs = data.get("constexprs", {})
        self.options = data.get("options", {})
        self.specialization = data.get("specialization", [])
        self.targets = data["targets"]
        self._exprs = {}

    def __getitem__(self, key):
        return self.data[key]

    def _expr(self, text):
        if text not in self._exprs:
            self._exprs[text] = Expr(text)
        return self._exprs[text]

    # --- configurations --------------------------------------------------
    def parameter_names(self, target):
        backend = TARGETS[target][0]
        return [p["name"] for p in self.parameters if backend in p.get("targets", ["cuda", "hip"])]

    def default_config(self, target):
        backend = TARGETS[target][0]
        return {p["name"]: p["default"] for p in self.parameters if backend in p.get("targets", ["cuda", "hip"])}

    def configurations(self, target):
        """Every configuration of the parameters that apply to target (the
        cartesian product of their values, constraints not applied)."""
        backend = TARGETS[target][0]
        params = [p for p in self.parameters if backend in p.get("targets", ["cuda", "hip"])]
        for values in itertools.product(*(p["values"] for p in params)):
            yield dict(zip((p["name"] for p in params), values))

    # --- problems --------------------------------------------------------
    def env(self, problem, config, layout="NN", dtype="f32", limits=None):
        """The names expressions read: the problem's dims (and the operator's
        other names, 0 where the problem gives none), the layout's trans_a
        and trans_b, dtype_bytes, the configuration, and device limits."""
        env = {name: 0 for name in self.extra_names}
        env.update({"batch": 1} if "batch" in self.dims else {})
        env.update(problem)
        env["trans_a"], env["trans_b"] = int(layout[0] == "T"), int(layout[1] == "T")
        env["dtype_bytes"] = {"f32": 4, "f16": 2, "bf16": 2}.get(dtype, 4)
        env.update(config)
        env.update(limits or {})
        return env

    def unmet(self, config, problem, layout="NN", dtype="f32", limits=None, field="constraints"):
        """Unmet constraints (or envelope entries) as text; one reading a
        device limit that `limits` lacks is skipped."""
        env = self.env(problem, config, layout, dtype, limits)
        failed = []
        for text in self.data.get(field, []):
            e = self._expr(text)
            if e.names - set(env):
                continue
            if not e.eval(env):
                failed.append(text)
        return failed

    def grid(self, config, problem, layout="NN", dtype="f32"):
        env = self.env(problem, config, layout, dtype)
        return [self._expr(g).eval(env) for g in self.data["grid"]]

    def argument_values(self, config, problem, layout="NN", dtype="f32"):
        """{kernel argument: int} for the arguments given by a value expression."""
        env = self.env(problem, config, layout, dtype)
        return {a["name"]: self._expr(a["value"]).eval(env) for a in self.arguments if "value" in a}

    def workspaces(self, config, problem, layout="NN", dtype="f32"):
        """[{name, type, elements, zeroed}] of the workspace arguments, in
        the kernel's order; elements from the manifest's expression."""
        env = self.env(problem, config, layout, dtype)
        signature = self.signature(dtype)
        out = []
        for a in self.arguments:
            if "workspace" not in a:
                continue
            elements = self._expr(a["workspace"]).eval(env)
            if elements < 0:
                raise ManifestError(f"{self.path}: arguments ({a['name']}).workspace: '{a['workspace']}' is "
                                    f"{elements} for {problem} {config}")
            out.append({"name": a["name"], "type": signature[a["name"]], "elements": elements,
                        "zeroed": a.get("zeroed", False)})
        return out

    def signature(self, dtype):
        return {a["name"]: a["type"].replace("{dtype}", DTYPES[dtype]) for a in self.arguments}

    def compile_request(self, config, target, dtype, out_dir, problem=None, layout="NN", timeout_s=None):
        """The compile helper's request for a configuration: constexprs are
        the configuration's non-option parameters and the fixed constexprs;
        options the manifest's fixed options and the configuration's option
        parameters; divisible_by_16 the specialization entries that hold
        (an entry with "when" needs `problem` and is left out without it)."""
        if target not in self.targets:
            raise ManifestError(f"{self.path}: targets: '{target}' is not one of {', '.join(self.targets)}")
        constexprs = self.constexpr_values(config, problem, layout, dtype)
        options = dict(self.options)
        options.update({k: v for k, v in config.items() if k in ALL_OPTIONS})
        divisible = []
        for entry in self.specialization:
            if "when" in entry:
                if problem is None:
                    continue
                if not self._expr(entry["when"]).eval(self.env(problem, config, layout, dtype)):
                    continue
            divisible.append(entry["argument"])
        request = {"source_path": self.source_path, "kernel": self.data["kernel"], "signature": self.signature(dtype),
                   "constexprs": constexprs, "options": options, "specialization": {"divisible_by_16": divisible},
                   "target": target, "out_dir": out_dir}
        if timeout_s is not None:
            request["timeout_s"] = timeout_s
        return request

    def constexpr_values(self, config, problem=None, layout="NN", dtype="f32"):
        """The fixed constexprs (those given as expressions evaluated over
        the problem) and the configuration's non-option parameters."""
        out = {}
        for name, value in self.constexprs.items():
            if isinstance(value, str):
                if problem is None:
                    raise ManifestError(f"{self.path}: constexprs.{name}: '{value}' needs a problem")
                value = self._expr(value).eval(self.env(problem, config, layout, dtype))
            out[name] = value
        out.update({k: v for k, v in config.items() if k not in ALL_OPTIONS})
        return out

    def interpret_request(self, config, problem, bindings, layout="NN", dtype="f32", guard_elements=1024):
        """The interpret helper's request: `bindings` maps each bound
        operator argument (problem dims need not be repeated) to a number
        (a scalar) or to {"npy": path, "out":
        bool, "out_npy": path} (a tensor; *bf16 arrays are uint16 bits).
        Workspaces are not bound: the helper allocates them."""
        values = self.argument_values(config, problem, layout, dtype)
        signature = self.signature(dtype)
        workspaces = {w["name"]: w for w in self.workspaces(config, problem, layout, dtype)}
        args = []
        for a in self.arguments:
            name, t = a["name"], signature[a["name"]]
            if name in workspaces:
                w = workspaces[name]
                args.append({"name": name, "kind": "workspace", "elements": w["elements"], "dtype": t[1:],
                             "zeroed": w["zeroed"]})
                continue
            if "value" in a:
                args.append({"name": name, "kind": "scalar", "value": values[name], "dtype": t})
                continue
            if a["bind"] in bindings:
                bound = bindings[a["bind"]]
            elif a["bind"] in problem and not t.startswith("*"):
                bound = problem[a["bind"]]  # the operator's size arguments are its dims
            else:
                raise ManifestError(f"{self.path}: arguments: {name} is bound to {a['bind']}, which the "
                                    f"bindings lack")
            if t.startswith("*"):
                arg = {"name": name, "kind": "array", "npy": bound["npy"], "out": bool(bound.get("out"))}
                if "out_npy" in bound:
                    arg["out_npy"] = bound["out_npy"]
                if t == "*bf16":
                    arg["dtype"] = "bf16"
                args.append(arg)
            else:
                args.append({"name": name, "kind": "scalar", "value": bound, "dtype": t})
        return {"source_path": self.source_path, "kernel": self.data["kernel"], "args": args,
                "constexprs": self.constexpr_values(config, problem, layout, dtype), "grid": self.grid(config, problem, layout, dtype),
                "guard_elements": guard_elements}


def _check_workspace(c, a, field, names):
    """A workspace: memory the kernel needs beyond the operator's, of
    `workspace` elements of the pointer's type, zero-filled where `zeroed`."""
    if not a["type"].startswith("*"):
        raise c.fail(f"{field}.type", f"'{a['type']}': a workspace is a pointer (one of {', '.join(POINTER_TYPES)})")
    text = a["workspace"]
    if isinstance(text, str) and not text.strip():
        raise c.fail(f"{field}.workspace", "empty: expected an element count (an expression)")
    c.expression(text, f"{field}.workspace", names)
    if "zeroed" in a and not isinstance(a["zeroed"], bool):
        raise c.fail(f"{field}.zeroed", f"expected true or false, got {json.dumps(a['zeroed'])}")


def load_manifest(path):
    """Reads and checks a triton template's manifest; ManifestError says
    which file, field and value is wrong."""
    c = _Checker(path)
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as e:
        raise ManifestError(f"{path}: cannot read: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ManifestError(f"{path}: not JSON: {e}") from None
    c.kind(data, dict, "(top)", "an object")
    c.known_keys(data, "", TOP_FIELDS)
    for key in REQUIRED:
        if key not in data:
            raise c.fail(key, "missing (required)")
    if data["schema_version"] != SCHEMA_VERSION:
        raise c.fail("schema_version", f"{json.dumps(data['schema_version'])}: unsupported (reads {SCHEMA_VERSION})")
    if data["kind"] != "triton":
        raise c.fail("kind", f"'{data['kind']}': expected \"triton\"")
    for key in ("name", "source", "kernel", "description"):
        if key in data:
            c.kind(data[key], str, key, "a string")
    if data["operator"] not in OPERATORS:
        raise c.fail("operator", f"'{data['operator']}' has no triton binding (known: {', '.join(OPERATORS)})")
    op = OPERATORS[data["operator"]]
    c.strings(data, "targets", list(TARGETS))
    c.strings(data, "dtypes", ["f32", "f16", "bf16"])
    c.strings(data, "layouts", LAYOUTS, required=False)

    source_path = os.path.join(os.path.dirname(os.path.abspath(path)), data["source"])
    if not os.path.isfile(source_path):
        raise c.fail("source", f"'{data['source']}': no such file next to the manifest")
    try:
        kparams = kernel_parameters(source_path, data["kernel"])
    except SyntaxError as e:
        raise c.fail("source", f"'{data['source']}' line {e.lineno}: syntax error: {e.msg}") from None
    except ValueError as e:
        raise c.fail("kernel", f"'{data['kernel']}': {data['source']} {e}") from None
    runtime_args = [n for n, const in kparams if not const]
    const_args = [n for n, const in kparams if const]

    # parameters: tuned constexprs and compile options
    params = c.kind(data["parameters"], list, "parameters", "a list of parameters")
    seen = set()
    for i, p in enumerate(params):
        field = f"parameters[{i}]"
        c.kind(p, dict, field, "an object {name, values, default, doc}")
        c.known_keys(p, field, PARAMETER_FIELDS)
        for key in ("name", "values", "default"):
            if key not in p:
                raise c.fail(f"{field}.{key}", "missing (required)")
        name = c.kind(p["name"], str, f"{field}.name", "a string")
        field = f"parameters[{i}] ({name})"
        if name in seen:
            raise c.fail(field, "named twice")
        seen.add(name)
        values = c.kind(p["values"], list, f"{field}.values", "a non-empty list of integers")
        if not values:
            raise c.fail(f"{field}.values", "empty")
        for v in values:
            c.kind(v, int, f"{field}.values", "integers (true/false for enable_fp_fusion)"
                   ) if name != "enable_fp_fusion" else c.kind(v, bool, f"{field}.values", "true or false")
        if p["default"] not in values or type(p["default"]) is not type(values[0]):
            raise c.fail(f"{field}.default", f"{json.dumps(p['default'])} is not one of its values {values}")
        backends = c.strings(p, "targets", ["cuda", "hip"], required=False) or ["cuda", "hip"]
        if name in ALL_OPTIONS:
            for b in backends:
                if name not in BACKEND_OPTIONS[b]:
                    raise c.fail(field, f"{name} is an option of {', '.join(x for x in BACKEND_OPTIONS if name in BACKEND_OPTIONS[x])} "
                                 f"only: give it \"targets\": [\"{'hip' if b == 'cuda' else 'cuda'}\"]")
        elif name not in const_args:
            raise c.fail(field, f"'{name}' is neither a compile option ({', '.join(ALL_OPTIONS)}) nor a "
                         f"tl.constexpr argument of {data['kernel']} ({', '.join(const_args) or 'none'})")
    param_names = [p["name"] for p in params]

    constexprs = c.kind(data.get("constexprs", {}), dict, "constexprs", "an object {argument: value}")
    for name, value in constexprs.items():
        if name not in const_args:
            raise c.fail(f"constexprs.{name}", f"not a tl.constexpr argument of {data['kernel']}")
        if name in param_names:
            raise c.fail(f"constexprs.{name}", "also a parameter")
    for name in const_args:
        if name not in param_names and name not in constexprs:
            raise c.fail("parameters", f"the kernel's constexpr '{name}' is neither a parameter nor in constexprs")

    options = c.kind(data.get("options", {}), dict, "options", "an object {option: value}")
    for name in options:
        if name not in ALL_OPTIONS:
            raise c.fail(f"options.{name}", f"not a compile option ({', '.join(ALL_OPTIONS)})")
        if name in param_names:
            raise c.fail(f"options.{name}", "also a parameter")

    names = set(op["dims"]) | set(op["names"]) | {"trans_a", "trans_b", "dtype_bytes"} | set(param_names)
    for name, value in constexprs.items():
        if isinstance(value, str):
            c.expression(value, f"constexprs.{name}", names)
        else:
            c.kind(value, (int, bool), f"constexprs.{name}", "an integer, true/false or an expression")

    # arguments: every runtime argument of the kernel, in the kernel's order
    args = c.kind(data["arguments"], list, "arguments", "a list of kernel arguments")
    arg_names = []
    for i, a in enumerate(args):
        field = f"arguments[{i}]"
        c.kind(a, dict, field, "an object {name, type, bind | value | workspace}")
        c.known_keys(a, field, ARGUMENT_FIELDS)
        for key in ("name", "type"):
            if key not in a:
                raise c.fail(f"{field}.{key}", "missing (required)")
        name = c.kind(a["name"], str, f"{field}.name", "a string")
        field = f"arguments[{i}] ({name})"
        sources = [key for key in ARGUMENT_SOURCES if key in a]
        if len(sources) != 1:
            raise c.fail(field, "needs exactly one of bind (an operator argument), value (an expression) and "
                         f"workspace (an element count), got {' and '.join(sources) or 'none'}")
        t = a["type"]
        if t not in SCALAR_TYPES + POINTER_TYPES:
            raise c.fail(f"{field}.type", f"'{t}' (one of {', '.join(SCALAR_TYPES + POINTER_TYPES)})")
        if "zeroed" in a and "workspace" not in a:
            raise c.fail(f"{field}.zeroed", "only a workspace is zeroed")
        if "workspace" in a:
            _check_workspace(c, a, field, names)
        elif "bind" in a:
            if a["bind"] not in op["arguments"]:
                raise c.fail(f"{field}.bind", f"'{a['bind']}' is not an argument of {data['operator']} "
                             f"({', '.join(op['arguments'])})")
        else:
            if t.startswith("*"):
                raise c.fail(f"{field}.value", "a pointer is bound to an operator argument, not computed")
            c.expression(a["value"], f"{field}.value", names)
        arg_names.append(name)
    if arg_names != runtime_args:
        raise c.fail("arguments", f"{arg_names} must name the kernel's non-constexpr arguments in order: {runtime_args}")

    specs = c.kind(data.get("specialization", []), list, "specialization", "a list")
    for i, s in enumerate(specs):
        field = f"specialization[{i}]"
        c.kind(s, dict, field, "an object {argument, divisible_by, when}")
        c.known_keys(s, field, SPECIALIZATION_FIELDS)
        if s.get("argument") not in runtime_args:
            raise c.fail(f"{field}.argument", f"{json.dumps(s.get('argument'))} is not a kernel argument")
        if s.get("divisible_by") != 16:
            raise c.fail(f"{field}.divisible_by", f"{json.dumps(s.get('divisible_by'))}: only 16 is supported")
        if "when" in s:
            c.expression(s["when"], f"{field}.when", names)

    grid = c.kind(data["grid"], list, "grid", "three expressions [x, y, z]")
    if len(grid) != 3:
        raise c.fail("grid", f"expected three expressions, got {len(grid)}")
    for i, g in enumerate(grid):
        c.expression(g, f"grid[{i}]", names)
    for key in ("constraints", "envelope"):
        for i, text in enumerate(c.strings(data, key, required=False)):
            c.expression(text, f"{key}[{i}]", names | set(DEVICE_LIMITS))
    return Manifest(path, data)


def main(argv=None):
    """`python3 -m kforge_triton.manifest FILE...`: checks each, one line each."""
    import sys
    argv = sys.argv[1:] if argv is None else argv
    code = 0
    for path in argv:
        try:
            m = load_manifest(path)
            print(f"{path}: ok ({m['name']}, {len(list(m.configurations(m.targets[0])))} configurations "
                  f"for {m.targets[0]})")
        except ManifestError as e:
            print(e)
            code = 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
