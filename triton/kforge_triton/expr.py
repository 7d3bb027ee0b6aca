"""kforge's manifest expressions (generator/expr.hpp) in Python: 64-bit
signed integers, C precedence, comparisons yield 0 or 1, functions min, max
and ceil_div, division and modulo truncating toward zero.

    expr := or;  or := and ('||' and)*;  and := cmp ('&&' cmp)*
    cmp := sum (('=='|'!='|'<'|'<='|'>'|'>=') sum)?
    sum := term (('+'|'-') term)*;  term := unary (('*'|'/'|'%') unary)*
    unary := ('!'|'-') unary | primary
    primary := INTEGER | NAME | NAME '(' expr (',' expr)* ')' | '(' expr ')'
"""

import re

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9]*)|(\|\||&&|==|!=|<=|>=|[-+*/%()<>!,]))")
FUNCTIONS = ("min", "max", "ceil_div")


class ExprError(ValueError):
    """"position P: what" as generator/expr.hpp words it."""


def _tokens(text):
    pos, out = 0, []
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if not m:
            start = len(text[pos:]) - len(text[pos:].lstrip()) + pos
            raise ExprError(f"position {start}: unexpected character '{text[start]}'")
        start = m.start(m.lastindex)
        if m.group(1):
            out.append(("int", int(m.group(1)), start))
        elif m.group(2):
            out.append(("name", m.group(2), start))
        else:
            out.append(("op", m.group(3), start))
        pos = m.end()
    out.append(("end", None, len(text)))
    return out


def _tdiv(a, b, pos):
    if b == 0:
        raise ExprError(f"position {pos}: division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _tmod(a, b, pos):
    if b == 0:
        raise ExprError(f"position {pos}: modulo by zero")
    return a - b * _tdiv(a, b, pos)


class Expr:
    """A parsed expression: .names (what it reads), .eval(env)."""

    def __init__(self, text):
        self.text = text
        self._toks = _tokens(text)
        self._i = 0
        self.names = set()
        self._tree = self._or()
        kind, value, pos = self._toks[self._i]
        if kind != "end":
            raise ExprError(f"position {pos}: expected an operator or the end, found '{value}'")
        del self._toks

    # --- parsing into nested tuples -------------------------------------
    def _peek(self):
        return self._toks[self._i]

    def _take_op(self, ops):
        kind, value, pos = self._toks[self._i]
        if kind == "op" and value in ops:
            self._i += 1
            return value, pos
        return None, pos

    def _binary(self, sub, ops, single=False):
        left = sub()
        while True:
            op, pos = self._take_op(ops)
            if op is None:
                return left
            left = ("bin", op, left, sub(), pos)
            if single:
                return left

    def _or(self):
        return self._binary(self._and, ("||",))

    def _and(self):
        return self._binary(self._cmp, ("&&",))

    def _cmp(self):
        return self._binary(self._sum, ("==", "!=", "<", "<=", ">", ">="), single=True)

    def _sum(self):
        return self._binary(self._term, ("+", "-"))

    def _term(self):
        return self._binary(self._unary, ("*", "/", "%"))

    def _unary(self):
        op, pos = self._take_op(("!", "-"))
        if op:
            return ("un", op, self._unary(), pos)
        return self._primary()

    def _primary(self):
        kind, value, pos = self._peek()
        if kind == "int":
            self._i += 1
            return ("int", value)
        if kind == "name":
            self._i += 1
            op, _ = self._take_op(("(",))
            if op is None:
                self.names.add(value)
                return ("name", value, pos)
            if value not in FUNCTIONS:
                raise ExprError(f"position {pos}: unknown function '{value}' (min, max, ceil_div)")
            args = [self._or()]
            while self._take_op((",",))[0]:
                args.append(self._or())
            if self._take_op((")",))[0] is None:
                raise ExprError(f"position {self._peek()[2]}: expected ',' or ')'")
            if value == "ceil_div" and len(args) != 2:
                raise ExprError(f"position {pos}: ceil_div takes 2 arguments, got {len(args)}")
            return ("call", value, args, pos)
        if kind == "op" and value == "(":
            self._i += 1
            inner = self._or()
            if self._take_op((")",))[0] is None:
                raise ExprError(f"position {self._peek()[2]}: expected ')'")
            return inner
        found = "the end" if kind == "end" else f"'{value}'"
        raise ExprError(f"position {pos}: expected a number, a name or '(', found {found}")

    # --- evaluation ------------------------------------------------------
    def eval(self, env):
        return self._eval(self._tree, env)

    def _eval(self, node, env):
        tag = node[0]
        if tag == "int":
            return node[1]
        if tag == "name":
            if node[1] not in env:
                raise ExprError(f"position {node[2]}: unknown name '{node[1]}'")
            return int(env[node[1]])
        if tag == "un":
            v = self._eval(node[2], env)
            return int(not v) if node[1] == "!" else -v
        if tag == "call":
            args = [self._eval(a, env) for a in node[2]]
            if node[1] == "min":
                return min(args)
            if node[1] == "max":
                return max(args)
            a, b = args
            if b <= 0:
                raise ExprError(f"position {node[3]}: ceil_div by {b}")
            return -((-a) // b)
        op, left, right, pos = node[1], node[2], node[3], node[4]
        if op == "||":
            return 1 if self._eval(left, env) or self._eval(right, env) else 0
        if op == "&&":
            return 1 if self._eval(left, env) and self._eval(right, env) else 0
        a, b = self._eval(left, env), self._eval(right, env)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return _tdiv(a, b, pos)
        if op == "%":
            return _tmod(a, b, pos)
        return int({"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op])
