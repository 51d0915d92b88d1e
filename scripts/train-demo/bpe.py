"""A byte-level BPE tokenizer: trainer, encoder and Hugging Face writer.

The pre-tokenizer is the GPT-2/Qwen2 regex over text with the added tokens
cut out first; words are bytes mapped to printable characters (GPT-2's
bytes_to_unicode); merges are learned by pair frequency over the words'
counts, ties broken by the pair's symbol ids, so training is deterministic.
The vocabulary is the 256 bytes, the merges in order, then the added tokens
(Qwen3's ids order, at the end).
"""

import heapq
import json
from collections import Counter, defaultdict

import regex

PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
           r"|\s*[\r\n]+|\s+(?!\S)|\s+")

# (content, special): Qwen3 marks the chat markers special and the
# think/tool tags not, so the tags survive skip_special_tokens.
ADDED = [("<|endoftext|>", True), ("<|im_start|>", True), ("<|im_end|>", True),
         ("<tool_call>", False), ("</tool_call>", False), ("<tool_response>", False),
         ("</tool_response>", False), ("<think>", False), ("</think>", False)]


def bytes_to_unicode():
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs)))


BYTE_CHARS = bytes_to_unicode()
PRE = regex.compile(PATTERN)
ADDED_RE = regex.compile("|".join(regex.escape(a) for a, _ in sorted(ADDED, key=lambda t: -len(t[0]))))


def split_added(text):
    """Yields (piece, is_added) in order."""
    pos = 0
    for m in ADDED_RE.finditer(text):
        if m.start() > pos:
            yield text[pos:m.start()], False
        yield m.group(0), True
        pos = m.end()
    if pos < len(text):
        yield text[pos:], False


def words(text):
    for piece, added in split_added(text):
        if not added:
            yield from PRE.findall(piece)


def train(texts, vocab_size, log=print):
    """Learns vocab_size - 256 - len(ADDED) merges; returns them as pairs of
    token ids (new ids from 256 up)."""
    counts = Counter()
    for t in texts:
        counts.update(words(t))
    ws, freq = [], []
    for w, c in sorted(counts.items()):
        ws.append([b for b in w.encode("utf-8")])
        freq.append(c)
    log("bpe: %d distinct words" % len(ws))
    pairs = defaultdict(int)
    where = defaultdict(set)
    for i, w in enumerate(ws):
        for a, b in zip(w, w[1:]):
            pairs[(a, b)] += freq[i]
            where[(a, b)].add(i)
    heap = [(-c, p) for p, c in pairs.items()]
    heapq.heapify(heap)
    merges = []
    n_merges = vocab_size - 256 - len(ADDED)
    while len(merges) < n_merges and heap:
        c, p = heapq.heappop(heap)
        if pairs.get(p, 0) != -c or c == 0:
            continue
        new = 256 + len(merges)
        merges.append(p)
        changed = set()
        for i in sorted(where.pop(p, ())):
            w, f = ws[i], freq[i]
            j, out = 0, []
            while j < len(w):
                if j + 1 < len(w) and w[j] == p[0] and w[j + 1] == p[1]:
                    out.append(new)
                    j += 2
                else:
                    out.append(w[j])
                    j += 1
            if len(out) == len(w):
                continue
            for a, b in zip(w, w[1:]):
                pairs[(a, b)] -= f
                changed.add((a, b))
            for a, b in zip(out, out[1:]):
                pairs[(a, b)] += f
                where[(a, b)].add(i)
                changed.add((a, b))
            ws[i] = out
        pairs.pop(p, None)
        for q in changed:
            if q != p and pairs.get(q, 0) > 0:
                heapq.heappush(heap, (-pairs[q], q))
    return merges


class Tokenizer:
    """Encodes text with merges (pairs of ids) as Hugging Face's BPE with a
    ByteLevel pre-tokenizer does: the lowest-ranked adjacent pair is merged
    first, repeatedly, within each pre-tokenized word."""

    def __init__(self, merges):
        self.merges = [tuple(m) for m in merges]
        self.rank = {m: r for r, m in enumerate(self.merges)}
        self.token_bytes = [bytes([b]) for b in range(256)]
        for a, b in self.merges:
            self.token_bytes.append(self.token_bytes[a] + self.token_bytes[b])
        self.added = {a: len(self.token_bytes) + i for i, (a, _) in enumerate(ADDED)}
        self.vocab_size = len(self.token_bytes) + len(ADDED)
        self.cache = {}

    def encode_word(self, w):
        ids = self.cache.get(w)
        if ids is not None:
            return ids
        ids = list(w.encode("utf-8"))
        while len(ids) > 1:
            best, at = None, -1
            for j in range(len(ids) - 1):
                r = self.rank.get((ids[j], ids[j + 1]))
                if r is not None and (best is None or r < best):
                    best, at = r, j
            if best is None:
                break
            new = 256 + best
            out, j = [], 0
            while j < len(ids):
                if j + 1 < len(ids) and ids[j] == self.merges[best][0] and ids[j + 1] == self.merges[best][1]:
                    out.append(new)
                    j += 2
                else:
                    out.append(ids[j])
                    j += 1
            ids = out
        self.cache[w] = ids
        return ids

    def encode(self, text):
        out = []
        for piece, added in split_added(text):
            if added:
                out.append(self.added[piece])
                continue
            for w in PRE.findall(piece):
                out.extend(self.encode_word(w))
        return out

    def token_len(self, i):
        """The bytes token i stands for (an added token's text)."""
        if i < len(self.token_bytes):
            return len(self.token_bytes[i])
        return len(ADDED[i - len(self.token_bytes)][0].encode())

    def decode(self, ids):
        inv = {v: k for k, v in self.added.items()}
        return b"".join(inv[i].encode() if i in inv else self.token_bytes[i] for i in ids).decode("utf-8", "replace")

    def piece(self, i):
        return "".join(BYTE_CHARS[b] for b in self.token_bytes[i])

    def tokenizer_json(self):
        added = [{"id": self.added[a], "content": a, "single_word": False, "lstrip": False, "rstrip": False,
                  "normalized": False, "special": s} for a, s in ADDED]
        return {
            "version": "1.0", "truncation": None, "padding": None, "added_tokens": added, "normalizer": None,
            "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": PATTERN}, "behavior": "Isolated", "invert": False},
                {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
            "post_processor": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
                      "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
                      "vocab": {self.piece(i): i for i in range(len(self.token_bytes))},
                      "merges": [[self.piece(a), self.piece(b)] for a, b in self.merges]},
        }

    def tokenizer_config(self, template):
        return {
            "add_bos_token": False, "add_prefix_space": False, "bos_token": None, "eos_token": "<|im_end|>",
            "pad_token": "<|endoftext|>", "unk_token": None, "errors": "replace", "model_max_length": 4096,
            "clean_up_tokenization_spaces": False, "split_special_tokens": False, "tokenizer_class": "Qwen2Tokenizer",
            "added_tokens_decoder": {str(self.added[a]): {"content": a, "lstrip": False, "normalized": False,
                                                          "rstrip": False, "single_word": False, "special": s}
                                     for a, s in ADDED},
            "chat_template": template,
        }

    def save(self, d, template):
        with open(d + "/tokenizer.json", "w", encoding="utf-8") as f:
            json.dump(self.tokenizer_json(), f, ensure_ascii=False)
        with open(d + "/tokenizer_config.json", "w", encoding="utf-8") as f:
            json.dump(self.tokenizer_config(template), f, ensure_ascii=False, indent=1)


def load_merges(path):
    with open(path) as f:
        return [tuple(m) for m in json.load(f)]


def from_tokenizer_json(path):
    """The Tokenizer a tokenizer.json written by Tokenizer.save describes,
    rebuilt from its vocabulary and merges alone."""
    with open(path, encoding="utf-8") as f:
        model = json.load(f)["model"]
    vocab = model["vocab"]
    return Tokenizer([(vocab[a], vocab[b]) for a, b in model["merges"]])
