"""Trains the splash-demo models from GOROOT, deterministically.

  /usr/bin/python3 train.py --out DIR [--steps N] [--draft-steps N] [--dflash-steps N]
      [--dflash-gen-steps N] [--threads N]

Steps, each skipped when its output exists (delete DIR to start over):

  corpus     DIR/corpus.jsonl               corpus.py over `go env GOROOT`
  tokenizer  DIR/merges.json, DIR/tokens.pt  bpe.py, vocabulary VOCAB
  target     DIR/target/                    the Qwen3.5 hybrid model (TARGET)
  draft      DIR/draft/                     a Qwen3 dense draft (DRAFT)
  dflash     DIR/dflash/                    a DFlash draft of the target (DFLASH)

Each model directory is a Hugging Face checkpoint (config.json,
model.safetensors in float32, tokenizer.json, tokenizer_config.json) plus
check.json: a held-out snippet's tokens and the torch logits of its last
positions, which checkdemo (Go) compares with the repo's loader. The
held-out loss is reported in bits per byte of held-out Go source (packages
never trained on), over windows of CONTEXT tokens.

The DFlash draft's directory is a DFlash checkpoint as z-lab's are
(config.json with dflash_config, model.safetensors with fc, hidden_norm,
layers.N.… and norm; no embeddings or head: it uses the target's) and its
check.json holds a context's target features, the anchor and the draft's
logits; its held-out figures are the mean accepted length per block with
the target's teacher-forced greedy tokens as the reference, and decoding
greedily as Splash does (dflash_chain; its mean is per block, so the hard
stretches, where blocks are many and short, weigh more than they would
position by position). DIR/dflash-rows.pt keeps the generations the
draft's second stage learns.
"""

import argparse
import json
import math
import os
import random
import struct
import subprocess
import sys
import time


def _threads():
    for i, a in enumerate(sys.argv):
        if a == "--threads" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith("--threads="):
            return a.split("=", 1)[1]
    return "2"


# OpenBLAS starts its own threads unless told before torch loads it.
os.environ["OPENBLAS_NUM_THREADS"] = _threads()
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import bpe  # noqa: E402
import corpus  # noqa: E402
from model import LM, DFlash, delta_rule_chunked, delta_rule_recurrent, l2norm  # noqa: E402

SEED = 1234
VOCAB = 4096
CONTEXT = 256
TARGET = {
    "hidden_size": 256, "intermediate_size": 768, "num_hidden_layers": 4,
    "layer_types": ["linear_attention"] * 3 + ["full_attention"],
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
    "linear_num_key_heads": 2, "linear_num_value_heads": 4, "linear_key_head_dim": 64,
    "linear_value_head_dim": 64, "linear_conv_kernel_dim": 4,
    "rms_norm_eps": 1e-6, "rope_theta": 10000.0, "partial_rotary_factor": 0.25,
}
DRAFT = {
    "hidden_size": 128, "intermediate_size": 384, "num_hidden_layers": 2,
    "num_attention_heads": 2, "num_key_value_heads": 1, "head_dim": 64,
    "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
}
# The DFlash draft: Qwen3 layers as wide as the target (it shares the
# target's embeddings and head), reading the residual stream after every
# target layer (there are only four), proposing DFLASH_BLOCK−1 tokens after
# each anchor. DFLASH_GAMMA is the DFlash paper's loss decay over a block's
# positions (weight e^−(k−1)/γ at the k-th proposal, γ 4 for blocks of 8):
# a proposal is only worth something when every one before it is accepted.
DFLASH = {
    "hidden_size": 256, "intermediate_size": 768, "num_hidden_layers": 2,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
    "rms_norm_eps": 1e-6, "rope_theta": 10000.0,
}
DFLASH_LAYERS = [0, 1, 2, 3]
DFLASH_BLOCK = 8
DFLASH_GAMMA = 4.0
DFLASH_ANCHORS = 16  # blocks per training row
# The second stage of the DFlash draft's training learns the target's own
# greedy generations, as DFlash drafts are trained: DFLASH_ROWS rows of a
# training prompt of CONTEXT−DFLASH_GEN tokens and the target's DFLASH_GEN
# greedy tokens after it, the blocks anchored in the generated part.
DFLASH_ROWS = 1024
DFLASH_GEN = 96
DFLASH_GEN_LR = 1e-3
DFLASH_MASK = "<|endoftext|>"  # the token whose embedding fills a block after its anchor


def log(*a):
    print(time.strftime("%H:%M:%S"), *a, flush=True)


def build_corpus(out):
    path = os.path.join(out, "corpus.jsonl")
    if not os.path.exists(path):
        goroot = subprocess.check_output(["go", "env", "GOROOT"], text=True).strip()
        corpus.main(goroot, path + ".tmp")
        os.replace(path + ".tmp", path)
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def build_tokenizer(out, docs):
    path = os.path.join(out, "merges.json")
    if not os.path.exists(path):
        merges = bpe.train([d["text"] for d in docs if d["split"] == "train"], VOCAB, log)
        with open(path + ".tmp", "w") as f:
            json.dump(merges, f)
        os.replace(path + ".tmp", path)
    tok = bpe.Tokenizer(bpe.load_merges(path))
    assert tok.vocab_size == VOCAB, tok.vocab_size
    return tok


def streams(out, docs, tok):
    """Token streams, documents joined by <|endoftext|>: train chat (qa,
    tool), train text (code, doc), held-out code, held-out chat."""
    path = os.path.join(out, "tokens.pt")
    if os.path.exists(path):
        return torch.load(path)
    eot = tok.added["<|endoftext|>"]
    groups = {"chat": [], "text": [], "heldout_code": [], "heldout_chat": []}
    for d in docs:
        chat = d["kind"] in ("qa", "tool")
        if d["split"] == "train":
            key = "chat" if chat else "text"
        else:
            key = "heldout_chat" if chat else "heldout_code" if d["kind"] == "code" else None
        if key:
            groups[key] += tok.encode(d["text"]) + [eot]
    s = {k: torch.tensor(v, dtype=torch.int16) for k, v in groups.items()}
    s["token_bytes"] = torch.tensor([tok.token_len(i) for i in range(VOCAB)])
    torch.save(s, path)
    for k, v in s.items():
        log("tokens: %s %d" % (k, len(v)))
    return s


def batch(stream, n, gen):
    starts = torch.randint(0, len(stream) - CONTEXT - 1, (n,), generator=gen)
    x = torch.stack([stream[i:i + CONTEXT + 1].long() for i in starts.tolist()])
    return x[:, :-1], x[:, 1:]


@torch.no_grad()
def bits_per_byte(model, stream, token_bytes, windows):
    """Held-out loss over `windows` windows of CONTEXT+1 tokens spread
    evenly over the stream: nats of every predicted token over the bytes
    they stand for."""
    model.eval()
    nats, nbytes = 0.0, 0
    n = min(windows, (len(stream) - 1) // CONTEXT)
    step = ((len(stream) - 1) // CONTEXT) // n
    for w in range(n):
        at = w * step * CONTEXT
        x = stream[at:at + CONTEXT + 1].long()[None]
        logits = model(x[:, :-1])
        nats += F.cross_entropy(logits[0], x[0, 1:], reduction="sum").item()
        nbytes += token_bytes[x[0, 1:]].sum().item()
    model.train()
    return nats / math.log(2) / nbytes


def mixed_batch(s, batch_size, gen):
    """A quarter of the rows chat, the rest Go source and docs: the chats
    are templated and learned fast (held-out chat reached 1 bit per byte
    while source was at 3)."""
    xc, yc = batch(s["chat"], batch_size // 4, gen)
    xt, yt = batch(s["text"], batch_size - batch_size // 4, gen)
    return torch.cat([xc, xt]), torch.cat([yc, yt])


def set_lr(opt, lr, step, steps):
    """Linear warm-up over the first 5% of steps, cosine decay to a tenth."""
    warm = max(1, steps // 20)
    frac = (step + 1) / warm if step < warm else 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, steps - warm)))
    for grp in opt.param_groups:
        grp["lr"] = lr * frac


def optimise(opt, params, loss):
    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(params, 1.0)
    opt.step()


def log_step(label, step, steps, loss, tokens, t0, c0):
    el, cpu = time.time() - t0, time.process_time() - c0
    log("%s: step %d/%d loss %.3f (%.0f tokens/s, %.0f s; %.0f tokens per CPU second, %.0f CPU s)" % (
        label, step, steps, loss, tokens / el, el, tokens / cpu, cpu))


def train(model, s, steps, lr, batch_size, label, args):
    """AdamW (set_lr's schedule) over mixed_batch rows. --stop-minutes
    ends the run early (to measure a prefix of the full schedule);
    --eval-every logs held-out bits per byte on a few windows along the
    way."""
    gen = torch.Generator().manual_seed(SEED)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    t0, c0 = time.time(), time.process_time()
    for step in range(steps):
        set_lr(opt, lr, step, steps)
        x, y = mixed_batch(s, batch_size, gen)
        loss = F.cross_entropy(model(x).view(-1, model.c["vocab_size"]), y.reshape(-1))
        optimise(opt, model.parameters(), loss)
        el = time.time() - t0
        if step % 10 == 0 or step == steps - 1:
            log_step(label, step, steps, loss.item(), (step + 1) * batch_size * CONTEXT, t0, c0)
        if args.eval_every and step % args.eval_every == args.eval_every - 1:
            log("%s: step %d tokens %d held-out Go source %.3f bits per byte (16 windows)" % (
                label, step, (step + 1) * batch_size * CONTEXT,
                bits_per_byte(model, s["heldout_code"], s["token_bytes"], 16)))
        if args.stop_minutes and el > 60 * args.stop_minutes:
            log("%s: stopped after %d of %d steps (--stop-minutes)" % (label, step + 1, steps))
            steps = step + 1
            break
    bpb = bits_per_byte(model, s["heldout_code"], s["token_bytes"], args.eval_windows)
    chat = bits_per_byte(model, s["heldout_chat"], s["token_bytes"], args.eval_windows)
    log("%s: held-out Go source %.3f bits per byte, held-out chat %.3f bits per byte (%d steps, %.0f s)" % (
        label, bpb, chat, steps, time.time() - t0))
    return {"heldout_code_bits_per_byte": bpb, "heldout_chat_bits_per_byte": chat, "steps": steps,
            "train_seconds": time.time() - t0}


def write_safetensors(path, tensors):
    """The safetensors format: an 8-byte little-endian header length, the
    JSON header (dtype, shape, byte offsets per tensor), the raw data."""
    header, blobs, off = {"__metadata__": {"format": "pt"}}, [], 0
    for name in sorted(tensors):
        t = tensors[name].float().contiguous()
        b = t.numpy().astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)))
        f.write(h)
        for b in blobs:
            f.write(b)


def read_safetensors(path):
    """The float32 tensors of a file write_safetensors wrote."""
    import numpy
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        assert e["dtype"] == "F32", (name, e["dtype"])
        a, b = e["data_offsets"]
        out[name] = torch.from_numpy(numpy.frombuffer(data[a:b], dtype="<f4").copy()).view(e["shape"])
    return out


def load_target(out):
    """The trained target of DIR/target, as torch modules."""
    model = LM(dict(TARGET, vocab_size=VOCAB), True, SEED)
    prefix = "model.language_model."
    ts = read_safetensors(os.path.join(out, "target", "model.safetensors"))
    model.load_state_dict({k[len(prefix):]: v for k, v in ts.items()})
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def export(model, tok, d, hybrid, s, metrics):
    os.makedirs(d, exist_ok=True)
    c = dict(model.c)
    eos = [tok.added["<|im_end|>"], tok.added["<|endoftext|>"]]
    common = {"vocab_size": VOCAB, "hidden_act": "silu", "max_position_embeddings": 4096, "attention_bias": False}
    if hybrid:
        rot = int(c["head_dim"] * c["partial_rotary_factor"])
        text = {k: v for k, v in c.items() if k not in ("rope_theta", "partial_rotary_factor")}
        text.update(common, model_type="qwen3_5_text", attn_output_gate=True, full_attention_interval=4,
                    rope_parameters={"rope_type": "default", "rope_theta": c["rope_theta"],
                                     "partial_rotary_factor": c["partial_rotary_factor"],
                                     "mrope_section": [rot // 4, rot // 4, rot // 2 - 2 * (rot // 4)],
                                     "mrope_interleaved": True})
        cfg = {"architectures": ["Qwen3_5ForConditionalGeneration"], "model_type": "qwen3_5", "text_config": text,
               "tie_word_embeddings": True, "bos_token_id": eos[1], "eos_token_id": eos, "torch_dtype": "float32"}
    else:
        cfg = dict(c, **common)
        cfg.update(architectures=["Qwen3ForCausalLM"], model_type="qwen3", tie_word_embeddings=True,
                   bos_token_id=eos[1], eos_token_id=eos, torch_dtype="float32")
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    with open(os.path.join(d, "generation_config.json"), "w") as f:
        json.dump({"eos_token_id": eos, "bos_token_id": eos[1]}, f, indent=1)
    write_safetensors(os.path.join(d, "model.safetensors"), model.state_dict_hf())
    with open(os.path.join(HERE, "chat_template.jinja")) as f:
        tok.save(d, f.read())
    # The check: a held-out snippet and the logits of its last positions.
    x = s["heldout_code"][1000:1048].long()
    model.eval()
    with torch.no_grad():
        logits = model(x[None])[0]
    model.train()
    last = 4
    check = {"tokens": x.tolist(), "positions": list(range(len(x) - last, len(x))),
             "logits": [[round(v, 6) for v in row] for row in logits[-last:].tolist()], "metrics": metrics}
    with open(os.path.join(d, "check.json"), "w") as f:
        json.dump(check, f)


def dflash_targets(target, x):
    """The target's features (hidden states after DFLASH_LAYERS,
    concatenated) at every position of x, and its next-token
    distributions, teacher-forced."""
    with torch.no_grad():
        final, kept = target.hidden(x, keep=DFLASH_LAYERS)
        probs = (final @ target.embed_tokens.weight.t()).softmax(-1)
    return torch.cat(kept, -1), probs


def dflash_logits(draft, target, x, feats, anchors, mask):
    """The draft's logits (through the target's tied head) for each
    anchor's DFLASH_BLOCK−1 proposals: (B, n, DFLASH_BLOCK−1, vocab).
    Block j of a row is [x[anchors[j]], mask × (DFLASH_BLOCK−1)]."""
    B, n = anchors.shape
    toks = torch.full((B, n, DFLASH_BLOCK), mask, dtype=torch.long)
    toks[:, :, 0] = x.gather(1, anchors)
    with torch.no_grad():
        embeds = target.embed_tokens(toks.view(B, -1))
    h = draft(feats, embeds, anchors, DFLASH_BLOCK).view(B, n, DFLASH_BLOCK, -1)[:, :, 1:]
    return h @ target.embed_tokens.weight.t()


def block_positions(anchors):
    """Each anchor's proposal positions minus one, where the target's
    teacher-forced distribution predicts them: (B, n, DFLASH_BLOCK−1)."""
    return anchors[:, :, None] + torch.arange(DFLASH_BLOCK - 1)


def gather_positions(t, at):
    """t (B, T, …) at positions at (B, n, k): (B, n, k, …)."""
    B, n, k = at.shape
    idx = at.reshape(B, n * k)
    return t[torch.arange(B)[:, None], idx].view(B, n, k, *t.shape[2:])


@torch.no_grad()
def dflash_acceptance(draft, target, stream, mask, windows):
    """Held-out mean accepted length per block, counting the anchor's
    bonus token as DFlash does (1 + the proposals accepted in a row): the
    draft's greedy proposals against the target's greedy tokens,
    teacher-forced on held-out text (the real chain conditions the target
    on the accepted proposals, not on the text)."""
    draft.eval()
    n = min(windows, (len(stream) - 1) // CONTEXT)
    step = ((len(stream) - 1) // CONTEXT) // n
    accepted, blocks = 0, 0
    for w in range(n):
        x = stream[w * step * CONTEXT:w * step * CONTEXT + CONTEXT].long()[None]
        feats, probs = dflash_targets(target, x)
        anchors = torch.arange(1, CONTEXT - DFLASH_BLOCK + 1, 2 * DFLASH_BLOCK)[None]
        want = gather_positions(probs.argmax(-1), block_positions(anchors))
        got = dflash_logits(draft, target, x, feats, anchors, mask).argmax(-1)
        accepted += (got == want).long().cumprod(-1).sum().item()
        blocks += anchors.numel()
    draft.train()
    return 1 + accepted / blocks


@torch.no_grad()
def dflash_chain(draft, target, stream, mask, prompts, prompt_len, new_tokens):
    """Mean accepted length per block of greedy speculative decoding as
    Splash runs it: the target's greedy token after each held-out prompt
    is the first anchor; each block's proposals are checked against the
    target's greedy tokens after the candidate, the ones accepted in a row
    and the target's next token appended (a block yields 1 + accepted),
    and the target's features up to the new anchor feed the next block."""
    draft.eval()
    E = target.embed_tokens.weight
    blocks, tokens = 0, 0
    step = (len(stream) - prompt_len) // prompts
    for i in range(prompts):
        seq = stream[i * step:i * step + prompt_len].long()
        final, kept = target.hidden(seq[None], keep=DFLASH_LAYERS)
        seq = torch.cat([seq, (final[0, -1] @ E.t()).argmax()[None]])
        produced = 1
        while produced < new_tokens:
            a = len(seq) - 1  # the anchor, whose features the target has not computed
            feats = torch.cat(kept, -1)[:, :a]
            prop = dflash_logits(draft, target, seq[None], feats, torch.tensor([[a]]), mask)[0, 0].argmax(-1)
            cand = torch.cat([seq, prop])
            final, kept = target.hidden(cand[None], keep=DFLASH_LAYERS)
            greedy = (final[0, a:] @ E.t()).argmax(-1)  # the target's tokens after the anchor and each proposal
            acc = 0
            while acc < len(prop) and prop[acc] == greedy[acc]:
                acc += 1
            seq = torch.cat([seq, prop[:acc], greedy[acc:acc + 1]])
            produced += acc + 1
            blocks += 1
            tokens += acc + 1
    draft.train()
    return tokens / blocks


def dflash_rows(args, target, s):
    """DFLASH_ROWS rows for the DFlash draft's second stage (cached in
    DIR/dflash-rows.pt): mixed_batch's prompts (a quarter chat, the rest Go
    source and docs) with the target's greedy continuation (LM.greedy) in
    their last DFLASH_GEN tokens; and the target's features at every
    position of them (dflash_targets), kept in memory (1 GB)."""
    path = os.path.join(args.out, "dflash-rows.pt")
    t0 = time.time()
    if os.path.exists(path):
        rows = torch.load(path).long()
    else:
        gen = torch.Generator().manual_seed(SEED + 1)
        prompt, parts = CONTEXT - DFLASH_GEN, []
        for i in range(0, DFLASH_ROWS, 64):
            x, _ = mixed_batch(s, 64, gen)
            parts.append(torch.cat([x[:, :prompt], target.greedy(x[:, :prompt], DFLASH_GEN)], 1))
        rows = torch.cat(parts)
        torch.save(rows.to(torch.int16), path + ".tmp")
        os.replace(path + ".tmp", path)
    feats = torch.cat([dflash_targets(target, rows[i:i + 64])[0] for i in range(0, len(rows), 64)])
    log("dflash: %d rows of the target's greedy generations and their features in %.0f s" % (len(rows), time.time() - t0))
    return rows, feats


def train_dflash(args, tok, s):
    """The DFlash draft on the frozen target's hidden states, in two
    stages. As in DFlash training, each row of CONTEXT tokens carries
    DFLASH_ANCHORS blocks at random anchors, each seeing the target's
    features before its anchor, the anchor token and masks; the loss goes
    through the target's head and decays over the block's positions
    (DFLASH_GAMMA). First (--dflash-steps) on the corpus, the draft
    learning the target's teacher-forced next-token distribution at each
    proposal's position (cross-entropy to it), anchors anywhere in the
    row: short contexts teach its attention where to look sooner. Then
    (--dflash-gen-steps) on the target's own greedy generations
    (dflash_rows), as the paper's drafts are trained: cross-entropy to the
    generated tokens, anchors in the generated part, the target's features
    computed once, a new optimiser at DFLASH_GEN_LR."""
    d = os.path.join(args.out, "dflash")
    if os.path.exists(os.path.join(d, "check.json")):
        log("dflash: %s exists, skipped" % d)
        return
    check_dflash_blocks()
    target = load_target(args.out)
    mask = tok.added[DFLASH_MASK]
    torch.manual_seed(SEED)
    c = dict(DFLASH, vocab_size=VOCAB)
    draft = DFlash(c, len(DFLASH_LAYERS), SEED)

    def greedy_chain():  # the held-out measure the stages report: 16 prompts, DFLASH_GEN tokens each
        return dflash_chain(draft, target, s["heldout_code"], mask, 16, CONTEXT - DFLASH_GEN, DFLASH_GEN)

    log("dflash: %d parameters, block %d, target layers %s" % (
        sum(p.numel() for p in draft.parameters()), DFLASH_BLOCK, DFLASH_LAYERS))
    gen = torch.Generator().manual_seed(SEED)
    opt = torch.optim.AdamW(draft.parameters(), lr=args.dflash_lr, betas=(0.9, 0.95), weight_decay=0.1)
    decay = torch.exp(-torch.arange(DFLASH_BLOCK - 1) / DFLASH_GAMMA)
    steps, t0, c0 = args.dflash_steps, time.time(), time.process_time()
    for step in range(steps):
        set_lr(opt, args.dflash_lr, step, steps)
        x, _ = mixed_batch(s, args.batch, gen)
        feats, probs = dflash_targets(target, x)
        anchors = torch.randint(1, CONTEXT - DFLASH_BLOCK + 1, (args.batch, DFLASH_ANCHORS), generator=gen)
        logits = dflash_logits(draft, target, x, feats, anchors, mask)
        want = gather_positions(probs, block_positions(anchors))
        ce = -(want * logits.log_softmax(-1)).sum(-1)  # (B, n, DFLASH_BLOCK−1)
        loss = (ce * decay).sum(-1).mean() / decay.sum()
        optimise(opt, draft.parameters(), loss)
        if step % 10 == 0 or step == steps - 1:
            log_step("dflash", step, steps, loss.item(), (step + 1) * args.batch * CONTEXT, t0, c0)
        if args.eval_every and step % args.eval_every == args.eval_every - 1:
            log("dflash: step %d held-out mean accepted length %.2f per block of %d (teacher-forced, 16 windows)" % (
                step, dflash_acceptance(draft, target, s["heldout_code"], mask, 16), DFLASH_BLOCK))
    first = greedy_chain()
    log("dflash: after the corpus stage, held-out mean accepted length %.2f per block decoding greedily" % first)
    rows, feats = dflash_rows(args, target, s)
    opt = torch.optim.AdamW(draft.parameters(), lr=DFLASH_GEN_LR, betas=(0.9, 0.95), weight_decay=0.1)
    gen_steps, t1, c1 = args.dflash_gen_steps, time.time(), time.process_time()
    for step in range(gen_steps):
        set_lr(opt, DFLASH_GEN_LR, step, gen_steps)
        idx = torch.randint(0, len(rows), (args.batch,), generator=gen)
        x = rows[idx]
        anchors = torch.randint(CONTEXT - DFLASH_GEN, CONTEXT - DFLASH_BLOCK + 1, (args.batch, DFLASH_ANCHORS), generator=gen)
        logits = dflash_logits(draft, target, x, feats[idx], anchors, mask)
        want = gather_positions(x, block_positions(anchors) + 1)
        ce = F.cross_entropy(logits.reshape(-1, VOCAB), want.reshape(-1), reduction="none").view(want.shape)
        loss = (ce * decay).sum(-1).mean() / decay.sum()
        optimise(opt, draft.parameters(), loss)
        if step % 10 == 0 or step == gen_steps - 1:
            log_step("dflash generations", step, gen_steps, loss.item(), (step + 1) * args.batch * CONTEXT, t1, c1)
        if args.eval_every and step % args.eval_every == args.eval_every - 1:
            log("dflash: generations step %d held-out mean accepted length %.2f per block decoding greedily" % (
                step, greedy_chain()))
    tau = dflash_acceptance(draft, target, s["heldout_code"], mask, args.eval_windows)
    chat = dflash_acceptance(draft, target, s["heldout_chat"], mask, args.eval_windows)
    log("dflash: held-out mean accepted length %.2f on Go source, %.2f on chat, per block of %d (teacher-forced; %d steps, %.0f s)" % (
        tau, chat, DFLASH_BLOCK, steps, time.time() - t0))
    chain = greedy_chain()
    log("dflash: held-out mean accepted length %.2f per block of %d decoding greedily (16 Go source prompts of %d tokens, %d tokens each; %.2f after the corpus stage)" % (
        chain, DFLASH_BLOCK, CONTEXT - DFLASH_GEN, DFLASH_GEN, first))
    metrics = {"heldout_code_accepted_length": tau, "heldout_chat_accepted_length": chat,
               "heldout_code_greedy_accepted_length": chain, "corpus_stage_greedy_accepted_length": first,
               "steps": steps, "generation_steps": gen_steps, "train_seconds": time.time() - t0}
    export_dflash(draft, target, d, s, mask, metrics)
    log("dflash: written to %s" % d)


def export_dflash(draft, target, d, s, mask, metrics):
    """A DFlash checkpoint (z-lab's config.json layout) and check.json: a
    held-out context's target features, the anchor after it and the
    draft's logits for the block's proposals."""
    os.makedirs(d, exist_ok=True)
    cfg = dict(draft.c, architectures=["DFlashDraftModel"], model_type="qwen3", hidden_act="silu",
               max_position_embeddings=4096, attention_bias=False, tie_word_embeddings=False,
               block_size=DFLASH_BLOCK, num_target_layers=len(target.layers), torch_dtype="float32",
               dflash_config={"mask_token_id": mask, "target_layer_ids": DFLASH_LAYERS})
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    write_safetensors(os.path.join(d, "model.safetensors"), draft.state_dict_hf())
    ctx = 24
    x = s["heldout_code"][1000:1000 + ctx + 1].long()[None]
    draft.eval()
    with torch.no_grad():
        feats, _ = dflash_targets(target, x[:, :ctx])
        logits = dflash_logits(draft, target, x, feats, torch.tensor([[ctx]]), mask)[0, 0]
    check = {"tokens": x[0].tolist(), "features": [round(v, 6) for v in feats[0].reshape(-1).tolist()],
             "logits": [[round(v, 6) for v in row] for row in logits.tolist()], "metrics": metrics}
    with open(os.path.join(d, "check.json"), "w") as f:
        json.dump(check, f)


def check_dflash_blocks():
    """Training runs many blocks per row in one masked pass; each block's
    output must equal the block run alone on the context before its anchor
    (the form Splash runs, which checkdemo compares with torch's)."""
    gen = torch.Generator().manual_seed(SEED)
    h, k, T, B, n = 32, 2, 40, 2, 3
    c = dict(DFLASH, hidden_size=h, intermediate_size=48, num_attention_heads=2, num_key_value_heads=1, head_dim=16)
    draft = DFlash(c, k, SEED)
    feats = torch.randn(B, T, k * h, generator=gen)
    anchors = torch.randint(1, T - DFLASH_BLOCK + 1, (B, n), generator=gen)
    embeds = torch.randn(B, n * DFLASH_BLOCK, h, generator=gen)
    err = 0.0
    with torch.no_grad():
        together = draft(feats, embeds, anchors, DFLASH_BLOCK)
        for b in range(B):
            for j in range(n):
                a, blk = anchors[b, j].item(), slice(j * DFLASH_BLOCK, (j + 1) * DFLASH_BLOCK)
                alone = draft(feats[b:b + 1, :a], embeds[b:b + 1, blk], anchors[b:b + 1, j:j + 1], DFLASH_BLOCK)
                err = max(err, (alone[0] - together[b, blk]).abs().max().item())
    if err > 1e-5:
        raise SystemExit("train: a DFlash block trained among others differs from the block alone by %g" % err)


def check_delta_rule():
    """Training uses the chunked delta rule; it must equal the token by
    token one (the form Splash's kernels and reference run)."""
    gen = torch.Generator().manual_seed(SEED)
    B, H, T, dk, dv = 2, 3, 100, 16, 8
    q = l2norm(torch.randn(B, H, T, dk, generator=gen)) / 4
    k = l2norm(torch.randn(B, H, T, dk, generator=gen))
    v = torch.randn(B, H, T, dv, generator=gen)
    g, beta = -2 * torch.rand(B, H, T, generator=gen), torch.rand(B, H, T, generator=gen)
    err = (delta_rule_chunked(q, k, v, g, beta, chunk=32) - delta_rule_recurrent(q, k, v, g, beta)).abs().max().item()
    if err > 1e-5:
        raise SystemExit("train: the chunked delta rule differs from the recurrent one by %g" % err)


def run_model(args, tok, s, name, c, hybrid, steps, lr):
    d = os.path.join(args.out, name)
    if os.path.exists(os.path.join(d, "check.json")):
        log("%s: %s exists, skipped" % (name, d))
        return
    torch.manual_seed(SEED)
    c = dict(c, vocab_size=VOCAB)
    model = LM(c, hybrid, SEED)
    log("%s: %d parameters" % (name, sum(p.numel() for p in model.parameters())))
    metrics = train(model, s, steps, lr, args.batch, name, args)
    export(model, tok, d, hybrid, s, metrics)
    log("%s: written to %s" % (name, d))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--steps", type=int, default=3500)
    ap.add_argument("--draft-steps", type=int, default=3000)
    ap.add_argument("--dflash-steps", type=int, default=1200)
    ap.add_argument("--dflash-gen-steps", type=int, default=800)
    ap.add_argument("--dflash-lr", type=float, default=3e-3)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--eval-windows", type=int, default=64)
    ap.add_argument("--eval-every", type=int, default=0)
    ap.add_argument("--stop-minutes", type=float, default=0)
    ap.add_argument("--only", choices=["tokenizer", "target", "draft", "dflash"], help="stop after this step")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.use_deterministic_algorithms(True)
    random.seed(SEED)
    os.makedirs(args.out, exist_ok=True)
    docs = build_corpus(args.out)
    tok = build_tokenizer(args.out, docs)
    s = streams(args.out, docs, tok)
    if args.only == "tokenizer":
        d = os.path.join(args.out, "tokenizer")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(HERE, "chat_template.jinja")) as f:
            tok.save(d, f.read())
        return
    check_delta_rule()
    run_model(args, tok, s, "target", TARGET, True, args.steps, 3e-3)
    if args.only == "target":
        return
    run_model(args, tok, s, "draft", DRAFT, False, args.draft_steps, 3e-3)
    if args.only == "draft":
        return
    train_dflash(args, tok, s)


if __name__ == "__main__":
    main()
