// Regenerates the tokenizer fixtures from the reference Rust implementation
// of Hugging Face tokenizers (npm @anush008/tokenizers@0.6.0):
//
//   mkdir -p /tmp/tokref && cd /tmp/tokref && npm install @anush008/tokenizers@0.6.0
//   NODE_PATH=/tmp/tokref/node_modules node gen-fixtures.js TOKENIZER_DIR OUT.json
//
// For every string of corpus.json it records the ids with special tokens
// parsed (add_special_tokens false) and the decoded text.
const fs = require("fs");
const path = require("path");
const { Tokenizer } = require("@anush008/tokenizers");

async function main() {
  const [dir, out] = process.argv.slice(2);
  const tok = Tokenizer.fromFile(path.join(dir, "tokenizer.json"));
  const corpus = JSON.parse(fs.readFileSync(path.join(__dirname, "corpus.json"), "utf8"));
  const cases = [];
  for (const text of corpus) {
    const enc = await tok.encode(text, null, { addSpecialTokens: false });
    const ids = Array.from(enc.getIds());
    cases.push({ text, ids, decoded: await tok.decode(ids, false), decoded_skip: await tok.decode(ids, true) });
  }
  fs.writeFileSync(out, JSON.stringify(cases));
}
main();
