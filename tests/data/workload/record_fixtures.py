"""Record the torch.profiler traces that tests/python/test_workload.py reads.

    python tests/data/workload/record_fixtures.py [OUT_DIR]

Four small models on the CPU, each profiled for two steps after one warm-up
(torch.profiler.schedule(wait=0, warmup=1, active=2)) with record_shapes=True and the torch version in the trace's metadata:

- decoder_block.json: a Llama-style decoder block (RMSNorm, Q/K/V/O
  projections, the rotate-half rotary embedding of Q and K, causal
  scaled_dot_product_attention, a SwiGLU MLP on one fused gate|up
  projection), tokens 16, hidden 64, 4 heads, MLP 128, f32;
- decoder_block_llama.json: the same block with separate gate and up
  projections (Hugging Face Llama's MLP): the second trace of the
  receipt tests (`compare`), which check its arithmetic, not a speedup;
- mlp.json: Linear 64->256, GELU, Linear 256->64, softmax over the last
  axis, on a batch of 32;
- conv.json: a convolution and a softmax over dim 1 (neither covered by
  kforge) and one Linear (covered).

The traces are written without stacks or memory events, and the Python
function events are dropped, to keep each file under ~300 KB.
"""
import json
import sys
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

HIDDEN, HEADS, MLP, TOKENS = 64, 4, 128, 16
HEAD_DIM = HIDDEN // HEADS


class DecoderBlock(nn.Module):
    """fused=True: one gate|up projection, chunked (the layout kforge's swiglu reads); False: separate
    gate and up projections, Hugging Face Llama's down(silu(gate(x)) * up(x))."""

    def __init__(self, fused=True):
        super().__init__()
        self.norm1 = nn.RMSNorm(HIDDEN)
        self.norm2 = nn.RMSNorm(HIDDEN)
        self.q, self.k, self.v, self.o = (nn.Linear(HIDDEN, HIDDEN, bias=False) for _ in range(4))
        self.fused = fused
        if fused:
            self.gate_up = nn.Linear(HIDDEN, 2 * MLP, bias=False)
        else:
            self.gate, self.up = nn.Linear(HIDDEN, MLP, bias=False), nn.Linear(HIDDEN, MLP, bias=False)
        self.down = nn.Linear(MLP, HIDDEN, bias=False)

        inv_freq = 1.0 / 10000 ** (torch.arange(0, HEAD_DIM, 2).float() / HEAD_DIM)
        angles = torch.outer(torch.arange(TOKENS).float(), inv_freq)
        self.register_buffer("cos", torch.cat((angles, angles), dim=-1).cos())  # TOKENS x HEAD_DIM
        self.register_buffer("sin", torch.cat((angles, angles), dim=-1).sin())

    def heads(self, x):
        return x.view(1, TOKENS, HEADS, HEAD_DIM).transpose(1, 2)

    def rotary(self, x):
        """Hugging Face Llama's apply_rotary_pos_emb: x * cos + rotate_half(x) * sin."""
        x1, x2 = x[..., : HEAD_DIM // 2], x[..., HEAD_DIM // 2:]
        return x * self.cos + torch.cat((-x2, x1), dim=-1) * self.sin

    def forward(self, x):
        h = self.norm1(x)
        q, k, v = self.heads(self.q(h)), self.heads(self.k(h)), self.heads(self.v(h))
        q, k = self.rotary(q), self.rotary(k)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(a.transpose(1, 2).reshape(TOKENS, HIDDEN))
        h = self.norm2(x)
        if not self.fused:
            return x + self.down(F.silu(self.gate(h)) * self.up(h))
        gate, up = self.gate_up(h).chunk(2, dim=-1)
        return x + self.down(F.silu(gate) * up)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.up, self.down = nn.Linear(64, 256), nn.Linear(256, 64)

    def forward(self, x):
        return torch.softmax(self.down(F.gelu(self.up(x))), dim=-1)


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.head = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        y = torch.softmax(self.conv(x), dim=1)
        return self.head(y.flatten(1))


def record(model, x, path):
    torch.manual_seed(0)
    schedule = torch.profiler.schedule(wait=0, warmup=1, active=2, repeat=1)
    with torch.no_grad(), torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                                 record_shapes=True, schedule=schedule,
                                                 on_trace_ready=lambda p: p.export_chrome_trace(str(path))) as prof:
        prof.add_metadata("torch_version", torch.__version__)
        for _ in range(3):
            model(x)
            prof.step()
    trim(path)


def trim(path):
    """Keep the events the reader uses (operators, steps, device and launch events, flows)."""
    doc = json.loads(Path(path).read_text())
    keep = {"cpu_op", "user_annotation", "kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime",
            "cuda_driver", "ac2g", "Trace"}
    doc["traceEvents"] = [e for e in doc["traceEvents"] if e.get("cat") in keep or e.get("ph") == "M"]
    Path(path).write_text(json.dumps(doc, separators=(",", ":")) + "\n")


def main():
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent
    torch.manual_seed(0)
    torch.set_num_threads(1)
    record(DecoderBlock().eval(), torch.randn(TOKENS, HIDDEN), out / "decoder_block.json")
    record(DecoderBlock(fused=False).eval(), torch.randn(TOKENS, HIDDEN), out / "decoder_block_llama.json")
    record(Mlp().eval(), torch.randn(32, 64), out / "mlp.json")
    record(Conv().eval(), torch.randn(2, 3, 8, 8), out / "conv.json")
    for name in ("decoder_block", "decoder_block_llama", "mlp", "conv"):
        print(out / f"{name}.json", (out / f"{name}.json").stat().st_size, "bytes")


if __name__ == "__main__":
    main()
