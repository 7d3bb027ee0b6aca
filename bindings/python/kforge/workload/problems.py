"""Operators and their inputs mapped to kforge problems (gemm, rmsnorm, layernorm, softmax,
attention), or why not: Uncovered. kforge's own torch ops (torch.ops.kforge.*) map to the
problem each one selects, so a trace of a model run through them compares with its eager trace."""


DTYPES = {"float": "f32", "c10::Half": "f16", "c10::BFloat16": "bf16"}
GEMM_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::linear", "aten::matmul"}
NORM_OPS = {"aten::rms_norm": "rmsnorm", "aten::layer_norm": "layernorm"}
SOFTMAX_OPS = {"aten::softmax", "aten::_softmax"}
ATTENTION_OPS = {"aten::scaled_dot_product_attention"}
SILU_OPS = {"aten::silu", "aten::silu_"}
KFORGE_OPS = {"kforge::gemm", "kforge::rms_norm", "kforge::softmax", "kforge::attention"}
COVERED_OPS = GEMM_OPS | set(NORM_OPS) | SOFTMAX_OPS | ATTENTION_OPS | KFORGE_OPS


def shape_text_of(op, i):
    types = type_list(op)
    return f"{types[i] if i < len(types) else '?'}{dims_at(op, i)}"


def dims_at(op, i):
    shapes = shape_list(op)
    return shapes[i] if i < len(shapes) and isinstance(shapes[i], list) else None


def shape_list(op):
    return op.args.get("Input Dims") or []


def type_list(op):
    return op.args.get("Input type") or []


def concrete(op, i):
    values = op.args.get("Concrete Inputs") or []
    return values[i] if i < len(values) else ""


def strides(op, i):
    values = op.args.get("Input Strides") or []
    return values[i] if i < len(values) else None


def kforge_dtype(op, i):
    types = type_list(op)
    torch_type = types[i] if i < len(types) else ""
    if torch_type not in DTYPES:
        raise Uncovered(f"dtype {torch_type or 'unknown'}: kforge takes f32, f16, bf16")
    return DTYPES[torch_type]


class Uncovered(Exception):
    """Why an operator (with these inputs) is not a kforge problem."""


def prod(values):
    out = 1
    for v in values:
        out *= v
    return out


def transposed(op, i, shape):
    """Whether input i is stored transposed (column-major in its last two dims), from its strides."""
    s = strides(op, i)
    if not s or len(s) != len(shape) or len(shape) < 2:
        return False
    return s[-2] == 1 and s[-1] != 1 and shape[-2] != 1


def gemm_problem(op):
    shapes = shape_list(op)
    name = op.name
    epilogue = "none"
    if name == "aten::linear":
        x, w = shapes[0], shapes[1]
        if len(w) != 2 or not x:
            raise Uncovered(f"linear with input {x} and weight {w}: kforge's gemm needs a 2-D weight")
        m, k, n = prod(x[:-1]), x[-1], w[0]
        batch, layout = 1, "N" + "T"
        epilogue = "bias" if len(shapes) > 2 and shapes[2] == [n] else "none"
        return gemm_dims(m, n, k, batch), kforge_dtype(op, 0), layout, epilogue
    if name == "aten::addmm":
        bias, a, b = shapes[0], shapes[1], shapes[2]
        ia, ib = 1, 2
        epilogue = "bias" if len(bias) == 1 else "none"
    else:
        a, b = shapes[0], shapes[1]
        ia, ib = 0, 1
    if len(a) < 2 or len(b) < 2:
        raise Uncovered(f"{name.split('::')[-1]} of {a} and {b}: a matrix-vector product, not a gemm")
    lead_a, lead_b = a[:-2], b[:-2]
    if lead_a and not lead_b:
        m, batch = prod(lead_a) * a[-2], 1
    elif lead_a and lead_b and lead_a != lead_b:
        raise Uncovered(f"{name.split('::')[-1]} of {a} and {b}: broadcast batch dimensions")
    elif not lead_a and lead_b:
        raise Uncovered(f"{name.split('::')[-1]} of {a} and {b}: a matrix times a batch (B batched, A not)")
    else:
        m, batch = a[-2], prod(lead_a)
    layout = ("T" if transposed(op, ia, a) and not (lead_a and not lead_b) else "N") + \
             ("T" if transposed(op, ib, b) else "N")
    return gemm_dims(m, b[-1], a[-1], batch), kforge_dtype(op, ia), layout, epilogue


def gemm_dims(m, n, k, batch):
    return {"M": m, "N": n, "K": k, "batch": batch}


def norm_problem(op):
    shapes = shape_list(op)
    x = shapes[0]
    weight = shapes[2] if len(shapes) > 2 else []
    cols = prod(weight) if weight else (x[-1] if x else 0)
    if not x or cols == 0 or prod(x) % cols:
        raise Uncovered(f"{op.name.split('::')[-1]} of {x} with weight {weight}: no rows x cols view")
    if weight and weight != x[len(x) - len(weight):]:
        raise Uncovered(f"normalized shape {weight} is not the trailing dims of {x}")
    if not weight:
        raise Uncovered("no weight: kforge's norms scale by a weight")
    if op.name == "aten::layer_norm" and (len(shapes) < 4 or not shapes[3]):
        raise Uncovered("no bias: kforge's layernorm adds one")
    return {"rows": prod(x) // cols, "cols": cols}, kforge_dtype(op, 0), "NN", "none"


def softmax_problem(op):
    x = shape_list(op)[0]
    dim_text = concrete(op, 1)
    dim = int(dim_text) if dim_text.lstrip("-").isdigit() else -1
    if not x:
        raise Uncovered("softmax of a scalar")
    if dim not in (-1, len(x) - 1):
        raise Uncovered(f"softmax over dim {dim} of {x}: kforge's softmax is over the last axis")
    return {"rows": prod(x) // x[-1], "cols": x[-1]}, kforge_dtype(op, 0), "NN", "none"


def attention_problem(op):
    shapes = shape_list(op)
    q, k, v = shapes[0], shapes[1], shapes[2]
    if len(q) != 4 or len(k) != 4 or len(v) != 4:
        raise Uncovered(f"attention on {q}, {k}, {v}: kforge takes B x H x S x D tensors")
    if q[1] != k[1] or k != v:
        raise Uncovered(f"attention with {q[1]} query heads over {k[1]} key heads: grouped-query attention")
    if len(shapes) > 3 and shapes[3]:
        raise Uncovered(f"attention with an attn_mask tensor {shapes[3]}: kforge takes no mask or causal")
    dropout = concrete(op, 4)
    if dropout not in ("", "0", "0.", "0.0"):
        raise Uncovered(f"attention with dropout_p={dropout}: kforge's attention has no dropout")
    causal = concrete(op, 5) == "True"
    dims = {"B": q[0], "H": q[1], "S": q[2], "SK": k[2], "D": q[3]}
    return dims, kforge_dtype(op, 0), "NN", "none", {"mask": "causal" if causal else "none"}


def kforge_op_problem(op):
    """The problem a torch.ops.kforge op selects (kforge/torch_ops.py): its gemm is a @ b with both
    operands contiguous (layout NN), its norm, softmax and attention as the aten operators'."""
    shapes = shape_list(op)
    if op.name == "kforge::gemm":
        a, b = shapes[0], shapes[1]
        batch = a[0] if len(a) == 3 else 1
        return "gemm", (gemm_dims(a[-2], b[-1], a[-1], batch), kforge_dtype(op, 0), "NN", "none")
    if op.name == "kforge::rms_norm":
        x, cols = shapes[0], shapes[1][0]
        return "rmsnorm", ({"rows": prod(x) // cols, "cols": cols}, kforge_dtype(op, 0), "NN", "none")
    if op.name == "kforge::softmax":
        x = shapes[0]
        return "softmax", ({"rows": prod(x) // x[-1], "cols": x[-1]}, kforge_dtype(op, 0), "NN", "none")
    q, k = shapes[0], shapes[1]
    dims = {"B": q[0], "H": q[1], "S": q[2], "SK": k[2], "D": q[3]}
    mask = "causal" if concrete(op, 3) == "True" else "none"
    return "attention", (dims, kforge_dtype(op, 0), "NN", "none", {"mask": mask})


def problem_of(op):
    """The kforge problem an Op is ({op, dims, dtype, layout, epilogue, attrs, key}), or Uncovered."""
    if op.name in GEMM_OPS:
        kind, parts = "gemm", gemm_problem(op)
    elif op.name in NORM_OPS:
        kind, parts = NORM_OPS[op.name], norm_problem(op)
    elif op.name in SOFTMAX_OPS:
        kind, parts = "softmax", softmax_problem(op)
    elif op.name in ATTENTION_OPS:
        kind, parts = "attention", attention_problem(op)
    elif op.name in KFORGE_OPS:
        kind, parts = kforge_op_problem(op)
    else:
        raise Uncovered(uncovered_reason(op))
    dims, dtype, layout, epilogue = parts[:4]
    attrs = parts[4] if len(parts) > 4 else {}
    return make_problem(kind, dims, dtype, layout, epilogue, attrs)


def make_problem(kind, dims, dtype, layout, epilogue, attrs):
    return {"op": kind, "dims": dims, "dtype": dtype, "layout": layout, "epilogue": epilogue, "attrs": attrs,
            "key": problem_key(kind, dims, dtype, layout, epilogue, attrs)}


def uncovered_reason(op):
    if not shape_list(op) and not type_list(op):
        return "no recorded inputs"
    if op.name in SILU_OPS:
        return (f"kforge has no operator for {op.name} alone (its swiglu is silu(gate) * up: an aten::mul "
                "of the silu's shape right after it, or after the up projection)")
    return f"kforge has no operator for {op.name}"


def problem_key(op, dims, dtype, layout, epilogue, attrs):
    """Problem::key() (generator/problem.cpp): op/dims/dtype/layout[/epilogue][/attrs]."""
    key = f"{op}/{','.join(f'{k}={dims[k]}' for k in sorted(dims))}/{dtype}/{layout}"
    if epilogue != "none":
        key += "/" + epilogue
    if attrs:
        key += "/" + ",".join(f"{k}={attrs[k]}" for k in sorted(attrs))
    return key


def shape_text(op):
    return ", ".join(f"{t or '?'}{list(s)}" if s else (t or "-")
                     for s, t in zip(shape_list(op), type_list(op) + [""] * len(shape_list(op))))
