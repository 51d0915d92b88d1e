"""The demo models in torch, with Hugging Face tensor names.

Hybrid is the Qwen3.5 text model (transformers' modular_qwen3_5.py and
modeling_qwen3_next.py; Splash's model/hybrid*.go and its float64
reference model/hybrid_reference_test.go): Gated DeltaNet and gated
full-attention layers, zero-centred RMSNorms (scale 1+w) everywhere but the
Gated DeltaNet's gated norm. Dense is Qwen3 (plain RMSNorms, full rotary,
ungated attention), the ordinary draft model.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    """x/sqrt(mean(x²)+eps) times 1+w (centred, w starts at 0) or w."""

    def __init__(self, n, eps, centred):
        super().__init__()
        self.eps, self.centred = eps, centred
        self.weight = nn.Parameter(torch.zeros(n) if centred else torch.ones(n))

    def forward(self, x):
        y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
        return y * (1 + self.weight) if self.centred else y * self.weight


def rope(x, pos, rot, theta):
    """Rotates pairs (i, i+rot/2) of x's first rot dimensions by pos·θ^(-2i/rot);
    x is (B, T, heads, head_dim), pos (T) or (B, T)."""
    inv = 1.0 / (theta ** (torch.arange(0, rot, 2, dtype=torch.float32) / rot))
    ang = (pos[..., None].float() * inv).unsqueeze(-2)  # (T, 1, rot/2) or (B, T, 1, rot/2)
    cos, sin = torch.cos(ang), torch.sin(ang)
    a, b, rest = x[..., :rot // 2], x[..., rot // 2:rot], x[..., rot:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos, rest], -1)


class Attention(nn.Module):
    """Causal attention with per-head q/k norms and (partial) RoPE; gated,
    q_proj gives each head's query then its gate, and the output is
    multiplied by sigmoid(gate) before o_proj."""

    def __init__(self, c, gated, centred):
        super().__init__()
        h, self.nh, self.nkv, self.hd = c["hidden_size"], c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
        self.gated, self.theta = gated, c["rope_theta"]
        self.rot = int(self.hd * c.get("partial_rotary_factor", 1.0))
        self.q_proj = nn.Linear(h, self.nh * self.hd * (2 if gated else 1), bias=False)
        self.k_proj = nn.Linear(h, self.nkv * self.hd, bias=False)
        self.v_proj = nn.Linear(h, self.nkv * self.hd, bias=False)
        self.o_proj = nn.Linear(self.nh * self.hd, h, bias=False)
        self.q_norm = RMSNorm(self.hd, c["rms_norm_eps"], centred)
        self.k_norm = RMSNorm(self.hd, c["rms_norm_eps"], centred)

    def forward(self, x, state=None):
        """Causal attention over x (B, T, hidden); state, when given, holds
        the keys and values of the positions before x (none when empty)
        and receives theirs and x's."""
        B, T, _ = x.shape
        start = state["k"].shape[1] if state else 0
        q = self.q_proj(x).view(B, T, self.nh, -1)
        if self.gated:
            q, gate = q[..., :self.hd], q[..., self.hd:]
        pos = torch.arange(start, start + T)
        q = rope(self.q_norm(q), pos, self.rot, self.theta)
        k = rope(self.k_norm(self.k_proj(x).view(B, T, self.nkv, self.hd)), pos, self.rot, self.theta)
        v = self.v_proj(x).view(B, T, self.nkv, self.hd)
        if state is not None:
            if state:
                k, v = torch.cat([state["k"], k], 1), torch.cat([state["v"], v], 1)
            state["k"], state["v"] = k, v
        o = self.attend(q, k, v, torch.ones(T, start + T, dtype=torch.bool).triu(start + 1))
        if self.gated:
            o = o * torch.sigmoid(gate)
        return self.o_proj(o.reshape(B, T, -1))

    def attend(self, q, k, v, blocked):
        """softmax(q·kᵀ/sqrt(head_dim)) v per head, the key-value heads
        shared by nh/nkv query heads each, where blocked (broadcast to (B,
        heads, queries, keys)) is false."""
        rep = self.nh // self.nkv
        k, v = k.repeat_interleave(rep, 2), v.repeat_interleave(rep, 2)
        att = torch.einsum("bthd,bshd->bhts", q, k) / math.sqrt(self.hd)
        att = att.masked_fill(blocked, float("-inf")).softmax(-1)
        return torch.einsum("bhts,bshd->bthd", att, v)


def init_weights(model, layers, gen):
    """Matrices N(0, 0.02), the residual stream's output projections
    scaled down by sqrt(2·layers), convolutions uniform in ±1/sqrt(taps)."""
    for name, p in model.named_parameters():
        if p.dim() >= 2 and "conv1d" not in name:
            std = 0.02
            if name.endswith("o_proj.weight") or name.endswith("down_proj.weight") or name.endswith("out_proj.weight"):
                std = 0.02 / math.sqrt(2 * layers)
            with torch.no_grad():
                p.normal_(0, std, generator=gen)
        elif "conv1d" in name:
            with torch.no_grad():
                p.uniform_(-1 / math.sqrt(p.shape[-1]), 1 / math.sqrt(p.shape[-1]), generator=gen)


def l2norm(x):
    return x * torch.rsqrt(x.pow(2).sum(-1, keepdim=True) + 1e-6)


def delta_rule_recurrent(q, k, v, g, beta, S=None, final=False):
    """The gated delta rule token by token: per head S ← S·e^g;
    S ← S + k⊗β(v − Sᵀk); o = Sᵀq. q, k (B, H, T, dk) normalised (q also
    scaled), v (B, H, T, dv), g and beta (B, H, T); S the state before the
    first token (zeros when None). final: also return the last S."""
    B, H, T, dk = k.shape
    if S is None:
        S = torch.zeros(B, H, dk, v.shape[-1])
    out = []
    for t in range(T):
        S = S * g[:, :, t, None, None].exp()
        kt = k[:, :, t]
        delta = beta[:, :, t, None] * (v[:, :, t] - torch.einsum("bhkv,bhk->bhv", S, kt))
        S = S + kt[..., None] * delta[..., None, :]
        out.append(torch.einsum("bhkv,bhk->bhv", S, q[:, :, t]))
    o = torch.stack(out, 2)
    return (o, S) if final else o


def delta_rule_chunked(q, k, v, g, beta, chunk=64, final=False):
    """The same rule a chunk at a time (the WY form of transformers'
    torch_chunk_gated_delta_rule): within a chunk with cumulative decays G,
    the corrected values U = (I+A)⁻¹(β·v) and W = (I+A)⁻¹(β·k·e^G), where
    A[i,j] = β_i (k_i·k_j) e^(G_i−G_j) for j<i; then per chunk
    v' = U − W·S, o = (q·e^G)·S + tril(q kᵀ e^(G_i−G_j))·v',
    S ← S·e^(G_last) + (k·e^(G_last−G))ᵀ·v'. final: also return the last S
    (padding leaves it as it is: its k, v and β are 0, its g 0)."""
    B, H, T, dk = k.shape
    dv = v.shape[-1]
    pad = (chunk - T % chunk) % chunk
    if pad:
        q, k, v = (F.pad(x, (0, 0, 0, pad)) for x in (q, k, v))
        g, beta = F.pad(g, (0, pad)), F.pad(beta, (0, pad))
    n = (T + pad) // chunk
    q, k, v = (x.reshape(B, H, n, chunk, -1) for x in (q, k, v))
    g, beta = g.reshape(B, H, n, chunk), beta.reshape(B, H, n, chunk)
    G = g.cumsum(-1)
    diff = G[..., :, None] - G[..., None, :]
    lower = torch.ones(chunk, chunk, dtype=torch.bool).tril()
    decay = diff.masked_fill(~lower, float("-inf")).exp()
    strict = ~torch.ones(chunk, chunk, dtype=torch.bool).triu()  # strictly lower
    A = (beta[..., None] * (k @ k.transpose(-1, -2)) * decay).masked_fill(~strict, 0)
    IA = A + torch.eye(chunk)
    rhs = torch.cat([v * beta[..., None], k * (beta * G.exp())[..., None]], -1)
    sol = torch.linalg.solve_triangular(IA, rhs, upper=False, unitriangular=True)
    U, W = sol[..., :dv], sol[..., dv:]
    qk = (q @ k.transpose(-1, -2)) * decay
    S = torch.zeros(B, H, dk, dv)
    out = []
    for i in range(n):
        vn = U[:, :, i] - W[:, :, i] @ S
        out.append((q[:, :, i] * G[:, :, i, :, None].exp()) @ S + qk[:, :, i] @ vn)
        last = G[:, :, i, -1]
        S = S * last[..., None, None].exp() + (k[:, :, i] * (last[..., None] - G[:, :, i]).exp()[..., None]).transpose(-1, -2) @ vn
    o = torch.stack(out, 2).reshape(B, H, n * chunk, dv)[:, :, :T]
    return (o, S) if final else o


class GatedDeltaNet(nn.Module):
    """Qwen3_5GatedDeltaNet: split projections (qkv, z, b, a), causal
    depthwise conv1d + SiLU over q, k and v, gates g = −e^A_log·
    softplus(a + dt_bias) and β = sigmoid(b), the delta rule on L2-normed
    q and k (q scaled 1/sqrt(dk)), each value head RMS-normed (plain
    weight) and gated by silu(z), out_proj."""

    def __init__(self, c, gen):
        super().__init__()
        h = c["hidden_size"]
        self.kh, self.vh = c["linear_num_key_heads"], c["linear_num_value_heads"]
        self.dk, self.dv = c["linear_key_head_dim"], c["linear_value_head_dim"]
        self.K = c["linear_conv_kernel_dim"]
        C = 2 * self.kh * self.dk + self.vh * self.dv
        self.in_proj_qkv = nn.Linear(h, C, bias=False)
        self.in_proj_z = nn.Linear(h, self.vh * self.dv, bias=False)
        self.in_proj_b = nn.Linear(h, self.vh, bias=False)
        self.in_proj_a = nn.Linear(h, self.vh, bias=False)
        self.conv1d = nn.Conv1d(C, C, self.K, groups=C, bias=False, padding=self.K - 1)
        self.A_log = nn.Parameter(torch.log(torch.empty(self.vh).uniform_(1, 16, generator=gen)))
        self.dt_bias = nn.Parameter(torch.ones(self.vh))
        self.norm = RMSNorm(self.dv, c["rms_norm_eps"], centred=False)
        self.out_proj = nn.Linear(self.vh * self.dv, h, bias=False)
        self.chunked = True

    def forward(self, x, state=None):
        """The layer over x (B, T, hidden); state, when given, holds what
        the positions before x left (none when empty: the convolution's
        last K−1 inputs, the delta rule's state) and receives what x
        leaves. The first call runs the chunked rule, later ones (a token
        at a time) the recurrent one."""
        B, T, _ = x.shape
        qkv = self.in_proj_qkv(x).transpose(1, 2)
        if state:
            window = torch.cat([state["conv"], qkv], -1)
            mix = F.conv1d(window, self.conv1d.weight, groups=window.shape[1])
        else:
            window = F.pad(qkv, (self.K - 1, 0))
            mix = self.conv1d(qkv)[..., :T]
        mix = F.silu(mix).transpose(1, 2)
        kd = self.kh * self.dk
        q = mix[..., :kd].reshape(B, T, self.kh, self.dk)
        k = mix[..., kd:2 * kd].reshape(B, T, self.kh, self.dk)
        v = mix[..., 2 * kd:].reshape(B, T, self.vh, self.dv)
        r = self.vh // self.kh
        q = (l2norm(q) / math.sqrt(self.dk)).repeat_interleave(r, 2)
        k = l2norm(k).repeat_interleave(r, 2)
        beta = torch.sigmoid(self.in_proj_b(x))
        g = -self.A_log.exp() * F.softplus(self.in_proj_a(x) + self.dt_bias)
        args = [t.transpose(1, 2) for t in (q, k, v, g, beta)]
        if state is None:
            o = (delta_rule_chunked if self.chunked else delta_rule_recurrent)(*args)
        elif state:
            o, state["S"] = delta_rule_recurrent(*args, S=state["S"], final=True)
        else:
            o, state["S"] = delta_rule_chunked(*args, final=True)
        if state is not None:
            state["conv"] = window[..., -(self.K - 1):]
        o = o.transpose(1, 2)
        z = self.in_proj_z(x).view(B, T, self.vh, self.dv)
        o = self.norm(o) * F.silu(z)
        return self.out_proj(o.reshape(B, T, -1))


class MLP(nn.Module):
    def __init__(self, h, inter):
        super().__init__()
        self.gate_proj = nn.Linear(h, inter, bias=False)
        self.up_proj = nn.Linear(h, inter, bias=False)
        self.down_proj = nn.Linear(inter, h, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class Layer(nn.Module):
    def __init__(self, c, kind, hybrid, gen):
        super().__init__()
        h, eps = c["hidden_size"], c["rms_norm_eps"]
        self.input_layernorm = RMSNorm(h, eps, hybrid)
        self.post_attention_layernorm = RMSNorm(h, eps, hybrid)
        if kind == "linear_attention":
            self.linear_attn = GatedDeltaNet(c, gen)
        else:
            self.self_attn = Attention(c, gated=hybrid, centred=hybrid)
        self.mlp = MLP(h, c["intermediate_size"])

    def forward(self, x, state=None):
        mixer = self.linear_attn if hasattr(self, "linear_attn") else self.self_attn
        x = x + mixer(self.input_layernorm(x), state)
        return x + self.mlp(self.post_attention_layernorm(x))


class LM(nn.Module):
    """A decoder-only LM with tied embeddings; text_config c. hybrid: the
    Qwen3.5 text model (layer_types), else Qwen3 (every layer attention)."""

    def __init__(self, c, hybrid, seed):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        self.c, self.hybrid = c, hybrid
        self.embed_tokens = nn.Embedding(c["vocab_size"], c["hidden_size"])
        kinds = c["layer_types"] if hybrid else ["full_attention"] * c["num_hidden_layers"]
        self.layers = nn.ModuleList(Layer(c, k, hybrid, gen) for k in kinds)
        self.norm = RMSNorm(c["hidden_size"], c["rms_norm_eps"], hybrid)
        init_weights(self, len(self.layers), gen)

    def hidden(self, ids, keep=(), states=None):
        """The final normed hidden states, and the residual stream after
        the layers in keep (for a DFlash draft's training); states, a dict
        per layer, hold what earlier calls left (ids continue them) and
        receive what ids leave."""
        x = self.embed_tokens(ids)
        kept = []
        for i, layer in enumerate(self.layers):
            x = layer(x, None if states is None else states[i])
            if i in keep:
                kept.append(x)
        return self.norm(x), kept

    def forward(self, ids):
        return self.hidden(ids)[0] @ self.embed_tokens.weight.t()

    @torch.no_grad()
    def greedy(self, prompts, new):
        """Greedy continuations of prompts (B, P), new tokens each (B,
        new): the prompts in one pass, then one token per row at a time,
        each layer keeping its state (attention's keys and values, the
        delta rule's and the convolution's), so a token costs one
        position, not the sequence."""
        states = [{} for _ in self.layers]
        E = self.embed_tokens.weight
        ids, out = prompts, []
        for _ in range(new):
            tok = (self.hidden(ids, states=states)[0][:, -1] @ E.t()).argmax(-1)
            out.append(tok)
            ids = tok[:, None]
        return torch.stack(out, 1)

    def state_dict_hf(self):
        """The weights under their Hugging Face names."""
        prefix = "model.language_model." if self.hybrid else "model."
        return {prefix + k: v.detach().contiguous() for k, v in self.state_dict().items()}


class DFlashAttention(Attention):
    """A DFlash draft layer's attention (z-lab/dflash dflash/model.py,
    Qwen3DFlashAttention): the block's queries attend to keys and values of
    the fused target context (k_proj and v_proj of it, with no layer norm:
    the same context feeds every layer) followed by the block's own, where
    mask allows; q and k normed per head, RoPE at each token's position."""

    def __init__(self, c):
        super().__init__(c, gated=False, centred=False)

    def forward(self, x, ctx, pos, ctx_pos, mask):
        B, n, _ = x.shape
        T = ctx.shape[1]
        q = rope(self.q_norm(self.q_proj(x).view(B, n, self.nh, self.hd)), pos, self.rot, self.theta)
        k = torch.cat([
            rope(self.k_norm(self.k_proj(ctx).view(B, T, self.nkv, self.hd)), ctx_pos, self.rot, self.theta),
            rope(self.k_norm(self.k_proj(x).view(B, n, self.nkv, self.hd)), pos, self.rot, self.theta)], 1)
        v = torch.cat([self.v_proj(ctx), self.v_proj(x)], 1).view(B, T + n, self.nkv, self.hd)
        return self.o_proj(self.attend(q, k, v, ~mask[:, None]).reshape(B, n, -1))


class DFlashLayer(nn.Module):
    def __init__(self, c):
        super().__init__()
        h, eps = c["hidden_size"], c["rms_norm_eps"]
        self.input_layernorm = RMSNorm(h, eps, False)
        self.self_attn = DFlashAttention(c)
        self.post_attention_layernorm = RMSNorm(h, eps, False)
        self.mlp = MLP(h, c["intermediate_size"])

    def forward(self, x, ctx, pos, ctx_pos, mask):
        x = x + self.self_attn(self.input_layernorm(x), ctx, pos, ctx_pos, mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class DFlash(nn.Module):
    """A DFlash block-diffusion draft (z-lab/dflash DFlashDraftModel) with
    Qwen3 layers c. It has no embeddings or head of its own: blocks come in
    embedded by the target's embed_tokens and leave normed for the
    target's head. fc fuses the target's hidden states after each of
    `features` layers (concatenated) and hidden_norm normalises them into
    the context every layer attends to."""

    def __init__(self, c, features, seed):
        super().__init__()
        gen = torch.Generator().manual_seed(seed)
        h, eps = c["hidden_size"], c["rms_norm_eps"]
        self.c = c
        self.fc = nn.Linear(features * h, h, bias=False)
        self.hidden_norm = RMSNorm(h, eps, False)
        self.layers = nn.ModuleList(DFlashLayer(c) for _ in range(c["num_hidden_layers"]))
        self.norm = RMSNorm(h, eps, False)
        init_weights(self, len(self.layers), gen)

    def forward(self, features, embeds, anchors, block):
        """features (B, T, k·hidden): the target's at positions 0 … T−1;
        anchors (B, n): each row's n block starts; embeds (B, n·block,
        hidden): the blocks' tokens, block j of a row at positions
        anchors[j] … anchors[j]+block−1. Each block sees the context before
        its anchor and the whole of itself (the draft is not causal), so
        the n blocks are n independent proposals, trained in one pass.
        Returns the normed hidden states, (B, n·block, hidden)."""
        B, T, _ = features.shape
        n = anchors.shape[1]
        ctx = self.hidden_norm(self.fc(features))
        pos = (anchors[:, :, None] + torch.arange(block)).reshape(B, n * block)
        ctx_pos = torch.arange(T)
        which = torch.arange(n).repeat_interleave(block)  # each query's block
        see_ctx = ctx_pos[None, None, :] < anchors[:, which, None]
        see_block = (which[:, None] == which[None, :]).expand(B, -1, -1)
        mask = torch.cat([see_ctx, see_block], -1)
        x = embeds
        for layer in self.layers:
            x = layer(x, ctx, pos, ctx_pos, mask)
        return self.norm(x)

    def state_dict_hf(self):
        """The weights under the DFlash checkpoints' names (fc.weight,
        hidden_norm.weight, layers.N.…, norm.weight)."""
        return {k: v.detach().contiguous() for k, v in self.state_dict().items()}
