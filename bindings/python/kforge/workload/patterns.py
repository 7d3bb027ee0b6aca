"""Composite PyTorch code recognised as one kforge operator: rotary embeddings (rotate_half) as
rope, silu times mul as swiglu."""
from .problems import SILU_OPS, Uncovered, concrete, dims_at, kforge_dtype, make_problem, prod, shape_list, shape_text_of


class Pattern:
    """Sibling operators on one thread recognised as one kforge operator (rope, swiglu): one unit of
    work, its time the sum of its members' (members need not be adjacent: a SwiGLU's up projection
    between its silu and mul stays a gemm of its own)."""

    def __init__(self, name, members, inputs, problem=None, not_covered=None):
        self.name = name
        self.members = members
        self.inputs = inputs
        self.problem = problem
        self.not_covered = not_covered
        self.ts = members[0].ts
        self.dur = sum(m.dur for m in members)
        self.thread = members[0].thread
        self.children = []

    def walk(self):
        for m in self.members:
            yield from m.walk()

    def device_us(self):
        return sum(m.device_us() for m in self.members)


ROPE_NAME = "rope (rotate_half)"
SWIGLU_NAME = "swiglu (silu * mul)"


def grouped(ops):
    """ops (siblings, in time order; several threads allowed) with the rope and SwiGLU patterns
    among them replaced by Patterns, in time order."""
    by_thread = {}
    for o in ops:
        by_thread.setdefault(o.thread, []).append(o)
    out = []
    for seq in by_thread.values():
        out += group_thread(sorted(seq, key=lambda o: o.ts))
    return sorted(out, key=lambda o: o.ts)


def group_thread(seq):
    taken, patterns = set(), []
    for i, o in enumerate(seq):
        if i in taken:
            continue
        found = match_rope(seq, i) if o.name == "aten::neg" else \
            match_swiglu(seq, i) if o.name in SILU_OPS else None
        if found and not taken & set(found[0]):
            taken |= set(found[0])
            patterns.append(found[1])
    return patterns + [o for i, o in enumerate(seq) if i not in taken]


def last_dim(op, i, rank):
    text = concrete(op, i)
    return text.lstrip("-").isdigit() and int(text) in (-1, rank - 1)


def match_rope(seq, n):
    """The rotate-half rotary embedding around the aten::neg at seq[n] (Hugging Face Llama's
    apply_rotary_pos_emb, x * cos + rotate_half(x) * sin): seven adjacent operators on one thread,
    aten::slice, aten::slice and aten::mul(x, cos) in either order [slice, slice, mul] or
    [mul, slice, slice], then aten::neg, aten::cat, aten::mul(rotated, sin), aten::add(., .); the
    slices halve x [..., D] along its last axis (0..D/2 and D/2..end), neg and cat take the halves
    (cat along the last axis), cos and sin have one shape. Returns (indices, Pattern) or None."""
    if n < 3 or n + 3 >= len(seq):
        return None
    before, (neg, cat, mul_sin, add) = seq[n - 3:n], seq[n:n + 4]
    names = [o.name for o in before]
    if names == ["aten::slice", "aten::slice", "aten::mul"]:
        slices, mul_cos = before[:2], before[2]
    elif names == ["aten::mul", "aten::slice", "aten::slice"]:
        slices, mul_cos = before[1:], before[0]
    else:
        return None
    if (cat.name, mul_sin.name, add.name) != ("aten::cat", "aten::mul", "aten::add"):
        return None
    x, cos, sin = dims_at(mul_cos, 0), dims_at(mul_cos, 1), dims_at(mul_sin, 1)
    if not x or len(x) < 2 or x[-1] % 2 or cos is None or cos != sin:
        return None
    half = x[:-1] + [x[-1] // 2]
    starts = sorted(concrete(s, 2) for s in slices)
    if any(dims_at(s, 0) != x or not last_dim(s, 1, len(x)) for s in slices) or \
            starts != sorted(["0", str(x[-1] // 2)]):
        return None
    cat_inputs = dims_at(cat, 0)
    if dims_at(neg, 0) != half or cat_inputs != [half, half] or not last_dim(cat, 1, len(x)):
        return None
    if dims_at(mul_sin, 0) != x or dims_at(add, 0) != x or dims_at(add, 1) != x:
        return None
    members = sorted(slices + [mul_cos, neg, cat, mul_sin, add], key=lambda o: o.ts)
    inputs = f"x {shape_text_of(mul_cos, 0)}, cos {shape_text_of(mul_cos, 1)}"
    indices = [seq.index(m) for m in members]
    try:
        problem = rope_problem(mul_cos, x, cos)
        return indices, Pattern(ROPE_NAME, members, inputs, problem=problem)
    except Uncovered as e:
        return indices, Pattern(ROPE_NAME, members, inputs, not_covered=str(e))


def rope_problem(op, x, cos):
    """rope's tokens, heads, head_dim from x [..., D] and cos (broadcast against x): a dim where cos
    has x's size is the sequence (tokens), one where cos has size 1 a head (or a batch sharing the
    positions); more than one sequence dim (a batch with positions of its own) is not covered."""
    d = x[-1]
    if not cos or cos[-1] != d:
        raise Uncovered(f"rotary with x {x} and cos {cos}: cos's last dim is not x's head_dim")
    aligned = [1] * (len(x) - len(cos)) + list(cos)
    if len(aligned) != len(x):
        raise Uncovered(f"rotary with x {x} and cos {cos}: cos has more dims than x")
    tokens, heads = [], []
    for size, c in zip(x[:-1], aligned[:-1]):
        if size == 1:
            continue
        if c == size:
            tokens.append(size)
        elif c == 1:
            heads.append(size)
        else:
            raise Uncovered(f"rotary with x {x} and cos {cos}: cos does not broadcast against x")
    if len(tokens) > 1:
        raise Uncovered(f"rotary with x {x} and cos {cos}: positions vary along {len(tokens)} dims (a batch "
                        "with positions of its own); kforge's rope numbers the tokens of one sequence")
    dims = {"tokens": prod(tokens), "heads": prod(heads), "head_dim": d}
    return make_problem("rope", dims, kforge_dtype(op, 0), "NN", "none", {"pairing": "half"})


def output_dims(op):
    """The output shape of a gemm operator, from its inputs (None when not a gemm)."""
    shapes = shape_list(op)
    if op.name == "aten::linear" and len(shapes) > 1 and shapes[0] and len(shapes[1]) == 2:
        return shapes[0][:-1] + [shapes[1][0]]
    if op.name in ("aten::mm", "aten::matmul", "aten::bmm") and len(shapes) > 1 and len(shapes[1]) >= 2:
        return (shapes[0] or [])[:-1] + [shapes[1][-1]]
    return None


def match_swiglu(seq, n):
    """SwiGLU around the aten::silu (or silu_) at seq[n] of g [..., C]: the next operator on the
    thread is aten::mul of two [..., C] tensors (silu(gate) * up after a chunk of a fused gate|up
    projection), or the next two are a gemm whose output is [..., C] (the up projection, which
    stays a gemm row of its own) and that mul. Returns (indices, Pattern) or None."""
    g = dims_at(seq[n], 0)
    if not g:
        return None
    for mul_at in (n + 1, n + 2):
        if mul_at >= len(seq) or seq[mul_at].name != "aten::mul":
            continue
        if mul_at == n + 2 and output_dims(seq[n + 1]) != g:
            continue
        mul = seq[mul_at]
        if dims_at(mul, 0) != g or dims_at(mul, 1) != g:
            return None
        inputs = shape_text_of(seq[n], 0)
        members = [seq[n], mul]
        try:
            dims = {"rows": prod(g[:-1]), "cols": g[-1]}
            pattern = Pattern(SWIGLU_NAME, members, inputs,
                              problem=make_problem("swiglu", dims, kforge_dtype(seq[n], 0), "NN", "none", {}))
        except Uncovered as e:
            pattern = Pattern(SWIGLU_NAME, members, inputs, not_covered=str(e))
        return [n, mul_at], pattern
    return None
