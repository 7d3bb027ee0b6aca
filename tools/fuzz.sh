#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz) with clang++-22 and
# -fsanitize=fuzzer,address,undefined, runs the generator's and the database's
# unit tests under ASan and UBSan, seeds each fuzz target from the repository's own
# inputs, and runs it for a fixed number of executions. A crash, a leak or
# undefined behaviour fails the run; libFuzzer leaves the input that did it
# in the target's artifact folder, to be committed under tests/fuzz/regressions.
#   KFORGE_FUZZ_RUNS (default 20000): executions per target; db_rows, which
#   builds a database for each input (about 70 a second), gets a fifth.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=${KFORGE_BUILD_DIR:-build}/fuzz
runs=${KFORGE_FUZZ_RUNS:-20000}
if ! command -v clang++-22 >/dev/null; then
  echo "fuzz: SKIPPED: clang++-22 not found (tools/deps.sh installs it)"
  exit 0
fi
cmake -S tests/fuzz -B "$out" -DCMAKE_CXX_COMPILER=clang++-22 -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$out" -j"$(nproc)"

# Seeds: every input of the kind the repository holds, plus each
# manifest's expressions one per file for the expression parser, the
# plans in docs/sweep.md for the sweep plan's, and the database columns of
# the JSON exports (and of every manifest) for the row readers'.
seeds=$out/seeds
rm -rf "$seeds"
mkdir -p "$seeds"/{expr,manifest,operator_declaration,npy,problem_json,ptx,worker_protocol,sweep_plan,interchange,cubin,code_object,db_rows}
n=0
for f in $(find templates examples tests/data -name manifest.json); do cp "$f" "$seeds/manifest/$((n++)).json"; done
for f in $(find examples tests/data -name operator.json); do cp "$f" "$seeds/operator_declaration/$((n++)).json"; done
for f in $(find examples tests/data -name '*.npy'); do cp "$f" "$seeds/npy/$((n++)).npy"; done
for f in $(grep -rl --include='*.json' '"entries"' bench/plans examples tests/data); do cp "$f" "$seeds/sweep_plan/$((n++)).json"; done
for f in $(grep -rl --include='*.json' '"kforge-tuning-export"' examples tests/data); do cp "$f" "$seeds/interchange/$((n++)).json"; done
cp tests/fuzz/seeds/ptx/* "$seeds/ptx/"
cp tests/fuzz/seeds/worker_protocol/* "$seeds/worker_protocol/"
cp tests/fuzz/seeds/interchange/* "$seeds/interchange/"
cp tests/fuzz/seeds/cubin/* "$seeds/cubin/"
cp tests/fuzz/seeds/code_object/* "$seeds/code_object/"
python3 - "$seeds" <<'PY'
import glob, json, sys
seeds = sys.argv[1]
texts = set()
for path in glob.glob("templates/**/manifest.json", recursive=True) + glob.glob("tests/data/**/manifest.json", recursive=True):
    m = json.load(open(path))
    for key in ("constraints", "envelope", "grid"):
        for e in m.get(key, []) or []:
            if isinstance(e, str):
                texts.add(e)
for i, t in enumerate(sorted(texts)):
    open(f"{seeds}/expr/{i}.txt", "w").write(t)
for i, block in enumerate(open("docs/sweep.md").read().split("```json\n")[1:]):
    open(f"{seeds}/sweep_plan/doc{i}.json", "w").write(block.split("```")[0])
problems = [
    {"op": "gemm", "dims": {"M": 128, "N": 64, "K": 32, "batch": 1}, "dtype": "bf16", "layout": "TN",
     "epilogue": "bias_relu", "attrs": {}},
    {"op": "rmsnorm", "dims": {"rows": 9, "cols": 100}, "dtype": "f32", "layout": "NN", "epilogue": "none",
     "attrs": {}},
    {"op": "attention", "dims": {"B": 1, "H": 2, "S": 20, "SK": 20, "D": 64}, "dtype": "f16", "layout": "NN",
     "epilogue": "none", "attrs": {"mask": "causal"}},
]
for i, p in enumerate(problems):
    open(f"{seeds}/problem_json/{i}.json", "w").write(json.dumps(p))
# Row readers: a selector byte, a JSON column, NUL, a name column (fuzz_db_rows.cpp).
rows = []
for path in glob.glob("templates/**/manifest.json", recursive=True):
    text = open(path).read()
    rows += [(0, text, "default"), (2, text, "default")]
exports = [f for f in glob.glob("tests/**/*.json", recursive=True) if '"kforge-tuning-export"' in open(f).read()]
for path in sorted(exports):
    doc = json.load(open(path))
    for d in doc.get("devices", []):
        rows += [(1, json.dumps(d.get("info")), d.get("key", "")), (2, json.dumps(d.get("info")), d.get("name", ""))]
    for p in doc.get("problems", []):
        rows.append((2, json.dumps(p.get("dims")), p.get("key", "")))
    for r in doc.get("results", []):
        rows += [(2, json.dumps(r.get("resources")), r.get("config", "")),
                 (2, json.dumps(r.get("samples_ms")), r.get("config", ""))]
    for t in doc.get("templates", []):
        rows.append((0, json.dumps(t.get("manifest")), ""))
for i, (selector, column, name) in enumerate(rows):
    open(f"{seeds}/db_rows/{i}.bin", "wb").write(bytes([selector]) + column.encode() + b"\0" + name.encode())
PY

status=0
# The generator's and the database's unit tests under the same sanitizers, first.
for suite in generator db; do
  echo "sanitizers: $suite unit tests (ASan, UBSan)"
  if ! "$out/${suite}_tests_sanitized" >"$out/${suite}_tests.log" 2>&1; then
    tail -n 60 "$out/${suite}_tests.log"
    echo "sanitizers: $suite unit tests FAILED"
    status=1
  else
    grep -E "test cases" "$out/${suite}_tests.log" | sed "s/^/sanitizers: $suite: /"
  fi
done
for target in expr manifest operator_declaration npy problem_json ptx worker_protocol sweep_plan interchange cubin code_object db_rows; do
  if [ ! -x "$out/fuzz_$target" ]; then
    echo "fuzz: $target SKIPPED: not built (LLVM 15 not found)"
    continue
  fi
  artifacts=$out/artifacts/$target
  mkdir -p "$artifacts" "$out/corpus/$target"
  target_runs=$runs
  [ "$target" = db_rows ] && target_runs=$((runs / 5))
  echo "fuzz: $target, $target_runs executions"
  dirs=("$out/corpus/$target" "$seeds/$target")
  [ -d "$root/tests/fuzz/regressions/$target" ] && dirs+=("$root/tests/fuzz/regressions/$target")
  if ! "$out/fuzz_$target" -runs="$target_runs" -seed=1 -max_len=65536 -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$artifacts/" "${dirs[@]}" 2>"$out/$target.log"; then
    tail -n 40 "$out/$target.log"
    echo "fuzz: $target FAILED; the input is in $artifacts"
    status=1
  else
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$out/$target.log" | sed "s/^/fuzz: $target /"
  fi
done
exit $status
