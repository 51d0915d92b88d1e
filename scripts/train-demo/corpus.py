"""Builds the demo model's corpus from the Go toolchain's own tree (GOROOT).

Every document is one JSON line {"split", "kind", "pkg", "text"}:

  code  a Go source file of the standard library, as is (plain completion);
  doc   a documentation page of GOROOT/doc, tags stripped;
  qa    a chat: a question about an exported function or type, answered by
        its signature and doc comment (sometimes with tools offered that the
        answer does not need, sometimes with a short <think>);
  tool  a chat: a request to read a file or list a directory, answered by a
        <tool_call> in the Qwen/Hermes format, the tool's response and a
        summary of it.

Chats are rendered exactly as chat_template.jinja renders them (see
render_chat). The split is by package: a package whose directory hashes to
0 mod HOLDOUT_MOD is held out, so held-out text is from packages the model
never saw. Everything is sorted and hashed, never random, so the corpus is a
function of GOROOT alone.
"""

import hashlib
import json
import os
import re
import sys

HOLDOUT_MOD = 20
MAX_CODE_BYTES = 64 << 10  # bigger files are generated tables more than code

TOOLS = {
    "read_file": {"type": "function", "function": {
        "name": "read_file", "description": "Read a file of the Go source tree.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "the file's path, e.g. src/strings/builder.go"}},
            "required": ["path"]}}},
    "list_dir": {"type": "function", "function": {
        "name": "list_dir", "description": "List the files of a directory of the Go source tree.",
        "parameters": {"type": "object", "properties": {
            "path": {"type": "string", "description": "the directory, e.g. src/net/http"}},
            "required": ["path"]}}},
    "go_doc": {"type": "function", "function": {
        "name": "go_doc", "description": "Show the documentation of a Go package or symbol.",
        "parameters": {"type": "object", "properties": {
            "symbol": {"type": "string", "description": "a package path or package.Symbol"}},
            "required": ["symbol"]}}},
}

QUESTIONS = [
    "What does {pkg}.{name} do?",
    "How do I use {name} from the {pkg} package?",
    "Explain {path}.{name}.",
    "What is the signature of {pkg}.{name}?",
    "Tell me about {name} in package {path}.",
    "What is {pkg}.{name} for?",
]
READS = [
    "Read the file {file}.",
    "Show me {file}.",
    "What is in {file}?",
    "Open {file} and tell me what it declares.",
]
LISTS = [
    "What files are in {dir}?",
    "List the directory {dir}.",
    "Which Go files does {dir} have?",
]


def h(s):
    """A stable 64-bit hash of a string."""
    return int.from_bytes(hashlib.sha256(s.encode()).digest()[:8], "little")


def tools_json(t):
    # json.dumps' default separators are what transformers' tojson writes.
    return json.dumps(t, ensure_ascii=False)


def render_chat(messages, tools=None):
    """Renders messages as the chat template does for a finished
    conversation: an optional system turn listing tools, then the turns;
    the last assistant turn carries its <think> block (empty when it has no
    reasoning), tool calls follow the content, tool results go in a user
    turn wrapped in <tool_response>."""
    out = []
    if tools:
        out.append("<|im_start|>system\n")
        out.append("# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
                   "You are provided with function signatures within <tools></tools> XML tags:\n<tools>")
        for t in tools:
            out.append("\n" + tools_json(t))
        out.append("\n</tools>\n\nFor each function call, return a json object with function name and "
                   "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
                   "{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n")
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    for i, m in enumerate(messages):
        role = m["role"]
        if role == "user":
            out.append("<|im_start|>user\n" + m["content"] + "<|im_end|>\n")
        elif role == "assistant":
            content = m.get("content", "")
            think = m.get("reasoning")
            if i > last_user and (i == len(messages) - 1 or think):
                out.append("<|im_start|>assistant\n<think>\n" + (think or "") + "\n</think>\n\n" + content)
            else:
                out.append("<|im_start|>assistant\n" + content)
            for j, call in enumerate(m.get("tool_calls", [])):
                if content or j > 0:
                    out.append("\n")
                out.append("<tool_call>\n{\"name\": \"" + call["name"] + "\", \"arguments\": " +
                           json.dumps(call["arguments"], ensure_ascii=False) + "}\n</tool_call>")
            out.append("<|im_end|>\n")
        elif role == "tool":
            if i == 0 or messages[i - 1]["role"] != "tool":
                out.append("<|im_start|>user")
            out.append("\n<tool_response>\n" + m["content"] + "\n</tool_response>")
            if i == len(messages) - 1 or messages[i + 1]["role"] != "tool":
                out.append("<|im_end|>\n")
    return "".join(out)


DECL = re.compile(r"((?:^//[^\n]*\n)+)^(func (?:\([^)]*\) )?([A-Z]\w*)[^\n]*?)\s*\{?$"
                  r"|((?:^//[^\n]*\n)+)^type ([A-Z]\w*) ([^\n]*?)\s*\{?$", re.M)
RECV = re.compile(r"^func \(\w*\s*\*?(\w+)")


def declarations(src):
    """Yields (name, signature, doc) for the exported, documented functions,
    methods and types of a Go file; a method's name is Type.Method."""
    for m in DECL.finditer(src):
        if m.group(1):
            doc, sig, name = m.group(1), m.group(2), m.group(3)
            if sig.count("(") != sig.count(")"):
                continue  # a signature over several lines
            r = RECV.match(sig)
            if r:
                if not r.group(1)[:1].isupper():
                    continue
                name = r.group(1) + "." + name
        else:
            doc, name = m.group(4), m.group(5)
            sig = "type " + name + " " + m.group(6)
        lines = [ln[2:].removeprefix(" ") for ln in doc.splitlines()]
        if any(ln.startswith("go:") for ln in lines):
            lines = [ln for ln in lines if not ln.startswith("go:")]
        text = "\n".join(lines).strip()
        if len(text) < 20:
            continue
        yield name, sig.rstrip(" {"), text


def package_name(src):
    m = re.search(r"^package (\w+)", src, re.M)
    return m.group(1) if m else None


def first_sentence(text):
    m = re.match(r"(.+?\.)(\s|$)", text.replace("\n", " "))
    return m.group(1) if m else text.split("\n")[0]


def strip_tags(html):
    text = re.sub(r"<script.*?</script>|<style.*?</style>", "", html, flags=re.S)
    text = re.sub(r"<[^>]+>", "", text)
    for a, b in (("&lt;", "<"), ("&gt;", ">"), ("&quot;", "\""), ("&#39;", "'"), ("&amp;", "&"), ("&nbsp;", " ")):
        text = text.replace(a, b)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def pick(options, key):
    return options[h(key) % len(options)]


def main(goroot, out):
    src = os.path.join(goroot, "src")
    pkgs = {}  # import path -> sorted [(relative file path, text)]
    for d, dirs, files in os.walk(src):
        dirs[:] = sorted(x for x in dirs if x not in ("testdata", "vendor", "cmd"))
        path = os.path.relpath(d, src)
        for f in sorted(files):
            if not f.endswith(".go") or f.endswith("_test.go") or f.startswith("z"):
                continue
            full = os.path.join(d, f)
            if os.path.getsize(full) > MAX_CODE_BYTES:
                continue
            with open(full, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if "Code generated" in text[:500]:
                continue
            pkgs.setdefault(path, []).append((os.path.join("src", path, f), text))
    docs = []

    def add(split, kind, pkg, text):
        docs.append({"split": split, "kind": kind, "pkg": pkg, "text": text})

    for path in sorted(pkgs):
        split = "heldout" if h(path) % HOLDOUT_MOD == 0 else "train"
        public = "internal" not in path.split("/") and path != "."
        files = pkgs[path]
        for rel, text in files:
            add(split, "code", path, text)
        if not public:
            continue
        pkg = package_name(files[0][1]) or path.split("/")[-1]
        for rel, text in files:
            decls = list(declarations(text))
            for name, sig, doc in decls:
                key = path + "." + name
                q = pick(QUESTIONS, key).format(pkg=pkg, name=name, path=path)
                answer = ("`%s.%s` is declared in package `%s` as:\n\n```go\n%s\n```\n\n%s"
                          % (pkg, name, path, sig, doc))
                think = None
                if h(key + "think") % 2 == 0:
                    think = "The user asks about %s in package %s. I will give its declaration and its documentation." % (name, path)
                tools = None
                if h(key + "tools") % 4 == 0:
                    tools = [TOOLS["read_file"], TOOLS["list_dir"]]
                add(split, "qa", path, render_chat([{"role": "user", "content": q},
                                                    {"role": "assistant", "content": answer, "reasoning": think}], tools))
            # A request to read this file, answered with a tool call, the
            # file's start as the tool's response and a summary.
            ask = pick(READS, rel).format(file=rel)
            names = [n for n, _, _ in decls][:12]
            head = "\n".join(text.splitlines()[:30])
            summary = "`%s` is part of package `%s`." % (rel, path)
            if names:
                summary += " It declares " + ", ".join("`%s`" % n for n in names) + "."
            tools = [TOOLS["read_file"], TOOLS["list_dir"], TOOLS["go_doc"]][:1 + h(rel) % 3]
            call = {"role": "assistant", "content": "", "tool_calls": [{"name": "read_file", "arguments": {"path": rel}}]}
            if h(rel + "full") % 3 == 0:
                add(split, "tool", path, render_chat([{"role": "user", "content": ask}, call,
                                                      {"role": "tool", "content": head},
                                                      {"role": "assistant", "content": summary}], tools))
            else:
                # Ending at the call, as a model's answer to the request is
                # rendered: with its <think> block.
                if h(rel + "think") % 2 == 0:
                    call["reasoning"] = "The user wants to read %s. I will call read_file." % rel
                add(split, "tool", path, render_chat([{"role": "user", "content": ask}, call], tools))
        d = "src/" + path
        ask = pick(LISTS, d).format(dir=d)
        listing = "\n".join(os.path.basename(r) for r, _ in files)
        add(split, "tool", path, render_chat([
            {"role": "user", "content": ask},
            {"role": "assistant", "content": "", "tool_calls": [{"name": "list_dir", "arguments": {"path": d}}]},
            {"role": "tool", "content": listing},
            {"role": "assistant", "content": "`%s` (package `%s`) has %d Go files: %s." % (
                d, pkg, len(files), ", ".join(os.path.basename(r) for r, _ in files))},
        ], [TOOLS["list_dir"], TOOLS["read_file"]]))
    docdir = os.path.join(goroot, "doc")
    for f in sorted(os.listdir(docdir)):
        full = os.path.join(docdir, f)
        if not os.path.isfile(full) or not (f.endswith(".html") or f.endswith(".md")):
            continue
        with open(full, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        if f.endswith(".html"):
            text = strip_tags(text)
        add("heldout" if h("doc/" + f) % HOLDOUT_MOD == 0 else "train", "doc", "doc/" + f, text)
    with open(out, "w", encoding="utf-8") as fh:
        for d in docs:
            fh.write(json.dumps(d, ensure_ascii=False) + "\n")
    counts = {}
    for d in docs:
        k = (d["split"], d["kind"])
        n, b = counts.get(k, (0, 0))
        counts[k] = (n + 1, b + len(d["text"].encode()))
    for k in sorted(counts):
        print("corpus: %-8s %-5s %6d documents %9d bytes" % (k[0], k[1], *counts[k]))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
