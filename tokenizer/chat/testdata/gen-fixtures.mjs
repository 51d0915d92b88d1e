// Regenerates the chat template fixtures with the reference renderer,
// @huggingface/jinja (the one transformers.js uses):
//
//   mkdir -p /tmp/jinjaref && cd /tmp/jinjaref && npm install @huggingface/jinja@0.5.13
//   node --experimental-default-type=module gen-fixtures.mjs   (run from this directory,
//     with NODE_PATH or a symlinked node_modules pointing at /tmp/jinjaref/node_modules)
//
// For each cases-NAME.json it renders every case with the chat_template of
// ../../../testdata/NAME-tokenizer/tokenizer_config.json.gz and writes
// expected-NAME.json.
import fs from "fs";
import zlib from "zlib";
import path from "path";
import { fileURLToPath } from "url";
import { Template } from "@huggingface/jinja";

const here = path.dirname(fileURLToPath(import.meta.url));
for (const name of ["qwen3", "llama3"]) {
  const cfgPath = path.join(here, "../../../testdata", `${name}-tokenizer`, "tokenizer_config.json.gz");
  const cfg = JSON.parse(zlib.gunzipSync(fs.readFileSync(cfgPath)));
  const tpl = new Template(cfg.chat_template);
  const cases = JSON.parse(fs.readFileSync(path.join(here, `cases-${name}.json`), "utf8"));
  const out = cases.map((c) => ({
    name: c.name,
    output: tpl.render({ bos_token: cfg.bos_token ?? "", eos_token: cfg.eos_token ?? "", tools: null, ...c.vars }),
  }));
  fs.writeFileSync(path.join(here, `expected-${name}.json`), JSON.stringify(out, null, 1));
}
