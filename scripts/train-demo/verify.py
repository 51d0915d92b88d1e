"""Checks an exported demo model directory against Splash's Go code:

  tokenizer  our Python encoder (rebuilt from tokenizer.json alone) and
             `splash tokenize --special` give the same ids on samples;
  template   `splash template` renders conversations exactly as the corpus
             renders them (corpus.render_chat);
  weights    checkdemo loads each checkpoint with Splash's loaders and
             compares its logits with torch's (check.json).

  /usr/bin/python3 verify.py SPLASH_BINARY CORPUS.jsonl DIR...
"""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import bpe  # noqa: E402
import corpus  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))


def samples(docs):
    """A held-out Go file, chats of each kind, and text with other scripts,
    digits, contractions and CR LF."""
    out = [next(d["text"] for d in docs if d["split"] == "heldout" and d["kind"] == "code")]
    out += [next(d["text"] for d in docs if d["kind"] == k) for k in ("qa", "tool", "doc")]
    out.append("héllo wörld, 日本語 ½ 12345 don't DON'T  \r\n\t\tx := y\u00a0z  \n\n  <|im_start|>user<think>")
    return out


def conversations():
    read = {"role": "assistant", "content": "", "tool_calls": [{"name": "read_file", "arguments": {"path": "src/fmt/print.go"}}]}
    return [
        ([{"role": "user", "content": "What does fmt.Println do?"},
          {"role": "assistant", "content": "It prints.", "reasoning": "The user asks about Println."}], None),
        ([{"role": "user", "content": "Read src/fmt/print.go."}, read,
          {"role": "tool", "content": "package fmt"},
          {"role": "assistant", "content": "It is package fmt."}], [corpus.TOOLS["read_file"], corpus.TOOLS["go_doc"]]),
        ([{"role": "user", "content": "Show me src/fmt/print.go."}, dict(read, reasoning=None)], [corpus.TOOLS["read_file"]]),
    ]


def hf_message(m):
    """A corpus message as an OpenAI/Hugging Face chat message."""
    o = {"role": m["role"], "content": m.get("content", "")}
    if m.get("reasoning"):
        o["reasoning_content"] = m["reasoning"]
    if m.get("tool_calls"):
        o["tool_calls"] = [{"type": "function", "function": c} for c in m["tool_calls"]]
    return o


def run(args, stdin):
    return subprocess.run(args, input=stdin, capture_output=True, check=True, cwd=REPO).stdout


def main(splash, corpus_path, dirs):
    with open(corpus_path, encoding="utf-8") as f:
        docs = [json.loads(line) for line in f]
    ok = True
    d = dirs[0]
    tok = bpe.from_tokenizer_json(os.path.join(d, "tokenizer.json"))
    for i, text in enumerate(samples(docs)):
        want = tok.encode(text)
        got = json.loads(run([splash, "tokenize", "--special", "--tokenizer", d], text.encode()))
        same = got == want
        ok &= same
        print("tokenizer: sample %d (%d bytes, %d tokens): %s" % (i, len(text.encode()), len(want), "same ids" if same else "DIFFERENT"))
    for i, (msgs, tools) in enumerate(conversations()):
        req = {"messages": [hf_message(m) for m in msgs]}
        if tools:
            req["tools"] = tools
        got = run([splash, "template", "--tokenizer", d], json.dumps(req).encode()).decode()
        want = corpus.render_chat(msgs, tools)
        same = got == want
        ok &= same
        print("template: conversation %d: %s" % (i, "same text" if same else "DIFFERENT:\n%r\n%r" % (got, want)))
    r = subprocess.run(["go", "run", "./scripts/train-demo/checkdemo"] + dirs, cwd=REPO)
    ok &= r.returncode == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
