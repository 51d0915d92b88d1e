// Regenerates the SentencePiece-style BPE fixtures and the normalizer and
// pre-tokenizer tables from the reference Rust implementation of Hugging
// Face tokenizers (npm @anush008/tokenizers@0.6.0, tokenizers 0.22):
//
//   mkdir -p /tmp/tokref && cd /tmp/tokref && npm install @anush008/tokenizers@0.6.0
//   cd tokenizer/testdata && NODE_PATH=/tmp/tokref/node_modules node gen-sp-fixtures.js
//
// It writes, next to itself:
//   fixtures-sp-NAME.json.gz  for the vendored NAME-tokenizer/ folders
//                             (mistral7b) and every entry of
//                             sp-variants.json (a vendored tokenizer.json with
//                             some components replaced);
//   components.json           normalizer and pre-tokenizer outputs for
//                             short inputs, one table per component.
// Each fixture case holds the ids without and with the post-processor's
// special tokens (special tokens in the text are parsed), and the decoded
// text with and without skipping special tokens. The corpus is corpus.json,
// then corpus-sp.json, then 200 pseudo-random strings (fixed seed) drawn
// from pieces that stress the edges: rare characters (byte fallback),
// combining marks, space runs, "▁", fragments of special tokens.
const fs = require("fs");
const path = require("path");
const zlib = require("zlib");
const { Tokenizer } = require("@anush008/tokenizers");

const here = __dirname;
const readJSON = (p) => JSON.parse(fs.readFileSync(path.join(here, p), "utf8"));

function vendored(name) {
  const gz = fs.readFileSync(path.join(here, name + "-tokenizer", "tokenizer.json.gz"));
  return JSON.parse(zlib.gunzipSync(gz).toString("utf8"));
}

// applyPatch mirrors applyVariant in the Go tests: top-level keys are
// replaced, "model" keys are merged, "added_tokens" are appended, and
// "merges_append" is appended to the model's merges; "merges_as_pairs"
// rewrites the merges "a b" as ["a", "b"].
function applyPatch(tj, patch) {
  for (const [k, v] of Object.entries(patch)) {
    if (k === "model") Object.assign(tj.model, v);
    else if (k === "merges_append") tj.model.merges.push(...v);
    else if (k === "merges_as_pairs") tj.model.merges = tj.model.merges.map((m) => m.split(" "));
    else if (k === "added_tokens") tj.added_tokens.push(...v);
    else tj[k] = v;
  }
  return tj;
}

async function fixtures(tj, corpus) {
  const tok = Tokenizer.fromString(JSON.stringify(tj));
  const cases = [];
  for (const text of corpus) {
    const ids = Array.from((await tok.encode(text, null, { addSpecialTokens: false })).getIds());
    const idsSpecial = Array.from((await tok.encode(text, null, { addSpecialTokens: true })).getIds());
    cases.push({
      text, ids, ids_special: idsSpecial,
      decoded: await tok.decode(ids, false), decoded_skip: await tok.decode(ids, true),
    });
  }
  return cases;
}

// Inputs for the component tables: case, compatibility forms, combining
// marks, whitespace of several kinds, the SentencePiece space mark.
const inputs = [
  "", "Hello World", "  padded  ", "\t\ttabs\n", "a  b   c", "ÀÉÎÕÜ àéîõü", "e\u0301 a\u030a",
  "ﬁ ﬂ ① Ａｂ ½ Ω Å", "İstanbul ΣΟΣ ß ẞ Ǆǅǆ", "ΑΒΓ straße", "\u00a0nb\u2003sp\u3000",
  "한국어 가", "x\u2581y \u2581", "123 ４５６", "😀 👍🏽",
  "Ⓐⓑ Ⅳ² ½ a_b x-y ٣٤", "$+<=>^`|~ «» ¿¡ 「」 ‿⁀", "3.14, 1,000; v2 (ok)!?",
];

const components = {
  normalizer: [
    { type: "NFC" }, { type: "NFD" }, { type: "NFKC" }, { type: "NFKD" }, { type: "Lowercase" },
    { type: "Strip", strip_left: true, strip_right: true },
    { type: "Strip", strip_left: true, strip_right: false },
    { type: "Strip", strip_left: false, strip_right: true },
    { type: "Prepend", prepend: "\u2581" },
    { type: "Replace", pattern: { String: " " }, content: "\u2581" },
    { type: "Replace", pattern: { String: "ab" }, content: "" },
    { type: "Replace", pattern: { Regex: " {2,}" }, content: " " },
    { type: "Replace", pattern: { Regex: "[0-9]+" }, content: "#" },
    { type: "Sequence", normalizers: [{ type: "NFKD" }, { type: "Lowercase" }, { type: "Prepend", prepend: "\u2581" }] },
    { type: "StripAccents" }, { type: "Sequence", normalizers: [{ type: "NFD" }, { type: "StripAccents" }, { type: "NFC" }] },
  ],
  pre_tokenizer: [
    { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: true },
    { type: "Metaspace", replacement: "\u2581", prepend_scheme: "always", split: false },
    { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: true },
    { type: "Metaspace", replacement: "\u2581", prepend_scheme: "never", split: true },
    { type: "Metaspace", replacement: "_", prepend_scheme: "always", split: true },
    ...["Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"].flatMap((behavior) => [
      { type: "Split", pattern: { String: " " }, behavior, invert: false },
      { type: "Split", pattern: { String: " " }, behavior, invert: true },
      { type: "Split", pattern: { Regex: "[0-9]+|\\p{P}" }, behavior, invert: false },
    ]),
    { type: "Split", pattern: { Regex: "[^ ]+" }, behavior: "Removed", invert: true },
    { type: "WhitespaceSplit" }, { type: "Whitespace" }, { type: "BertPreTokenizer" },
    { type: "Digits", individual_digits: true }, { type: "Digits", individual_digits: false },
    { type: "Punctuation", behavior: "Isolated" }, { type: "Punctuation", behavior: "Contiguous" },
    { type: "Punctuation", behavior: "MergedWithPrevious" },
    { type: "Sequence", pretokenizers: [{ type: "WhitespaceSplit" }, { type: "Digits", individual_digits: true }] },
  ],
};

function componentTables() {
  const tables = [];
  for (const [kind, specs] of Object.entries(components)) {
    for (const spec of specs) {
      const tj = {
        version: "1.0", added_tokens: [], normalizer: null, pre_tokenizer: null, post_processor: null, decoder: null,
        model: { type: "BPE", vocab: {}, merges: [] },
      };
      tj[kind] = spec;
      const tok = Tokenizer.fromString(JSON.stringify(tj));
      const cases = inputs.map((input) => {
        const out = kind === "normalizer"
          ? tok.getNormalizer().normalizeString(input)
          : tok.getPreTokenizer().preTokenizeString(input).map(([piece]) => piece);
        return { input, output: out };
      });
      tables.push({ kind, component: spec, cases });
    }
  }
  return tables;
}

// randomCorpus makes n strings from a fixed-seed generator (mulberry32).
function randomCorpus(n) {
  let seed = 20261203;
  const rand = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pieces = [
    " ", "  ", "   ", "\n", "\n\n", "\t", "\u2581", "a", "the", "ing", "Hello", "world", "x", "7", "42", "3.14",
    "é", "e\u0301", "ß", "İ", "Σ", "ﬁ", "Ａ", "①", "漢", "字", "龘", "𠀀", "㐀", "한", "ㄱ", "ไทย", "العربية", "עברית",
    "😀", "👍🏽", "🧑‍🚀", "\u200d", "\ufe0f", "\u0000", "\u007f", "\u00a0", "\u3000",
    "<", ">", "<s", "s>", "</", "<s>", "</s>", "<unk>", "<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>",
    "<0x41>", "[INST]", "{", "}", "()", "=>", "\\", "\"", "'", "'s", "...",
  ];
  const out = [];
  for (let i = 0; i < n; i++) {
    let s = "";
    const k = 1 + Math.floor(rand() * 12);
    for (let j = 0; j < k; j++) s += pieces[Math.floor(rand() * pieces.length)];
    out.push(s);
  }
  return out;
}

async function main() {
  const corpus = readJSON("corpus.json").concat(readJSON("corpus-sp.json"), randomCorpus(200));
  const write = (name, cases) => {
    fs.writeFileSync(path.join(here, `fixtures-sp-${name}.json.gz`), zlib.gzipSync(JSON.stringify(cases), { level: 9 }));
    console.log(name, cases.length, "cases");
  };
  const bases = {};
  for (const name of ["mistral7b"]) {
    bases[name] = vendored(name);
    write(name, await fixtures(bases[name], corpus));
  }
  for (const v of readJSON("sp-variants.json")) {
    const tj = applyPatch(JSON.parse(JSON.stringify(bases[v.base])), v.patch);
    write(v.name, await fixtures(tj, corpus));
  }
  fs.writeFileSync(path.join(here, "components.json"), JSON.stringify(componentTables(), null, 1) + "\n");
}
main();
