// markdown.js: a small, safe Markdown renderer for model replies.
//
// Safety comes from the order of work: the whole source is HTML-escaped
// first, so every tag in the output is one this file wrote. Links keep only
// http(s), mailto and same-site URLs, so no "javascript:" survives.
// Supported: ``` fenced code (an unclosed fence renders as code, as it does
// while a reply is still streaming), `inline code`, **bold**, *italic*,
// _italic_, [links](https://…), # headings, - / * / + and 1. lists,
// paragraphs with line breaks.
"use strict";

function escapeHTML(s) {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

// safeURL returns an already-escaped URL when its scheme is allowed, or "".
function safeURL(escaped) {
  if (/^(https?:\/\/|mailto:)/i.test(escaped) || /^[/#?]/.test(escaped) && !/^\/\//.test(escaped)) {
    return escaped;
  }
  return "";
}

// Placeholders are NUL-delimited indices; NUL never survives from the input
// (renderMarkdown strips it), so user text cannot forge one.
function stash(list, html) {
  list.push(html);
  return "\u0000" + (list.length - 1) + "\u0000";
}

function unstash(text, list) {
  return text.replace(/\u0000(\d+)\u0000/g, (_, i) => list[Number(i)]);
}

function emphasis(text) {
  return text
    .replace(/\*\*([^*\n]+?)\*\*/g, "<strong>$1</strong>")
    .replace(/__([^_\n]+?)__/g, "<strong>$1</strong>")
    .replace(/\*([^*\s][^*\n]*?)\*/g, "<em>$1</em>")
    .replace(/(^|[^\w])_([^_\s][^_\n]*?)_(?!\w)/g, "$1<em>$2</em>");
}

// inline renders one line of escaped text.
function inline(text) {
  const saved = [];
  text = text.replace(/`([^`\n]+)`/g, (_, code) => stash(saved, "<code>" + code + "</code>"));
  text = text.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g, (whole, label, url) => {
    const href = safeURL(url);
    if (!href) {
      return label;
    }
    return stash(saved, '<a href="' + href + '" target="_blank" rel="noopener noreferrer">' + emphasis(label) + "</a>");
  });
  return unstash(emphasis(text), saved);
}

function renderMarkdown(source) {
  const lines = escapeHTML(String(source).replace(/\r\n?/g, "\n").replace(/\u0000/g, "")).split("\n");
  const out = [];
  let para = [];
  let list = null; // {tag: "ul"|"ol", items: []}
  const flushPara = () => {
    if (para.length) {
      out.push("<p>" + para.map(inline).join("<br>") + "</p>");
      para = [];
    }
  };
  const flushList = () => {
    if (list) {
      out.push("<" + list.tag + ">" + list.items.map((it) => "<li>" + inline(it) + "</li>").join("") + "</" + list.tag + ">");
      list = null;
    }
  };
  const flush = () => { flushPara(); flushList(); };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = line.match(/^\s*```\s*([\w+#.-]*)\s*$/);
    if (fence) {
      flush();
      const body = [];
      for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]); i++) {
        body.push(lines[i]);
      }
      const cls = fence[1] ? ' class="language-' + fence[1] + '"' : "";
      out.push("<pre><code" + cls + ">" + body.join("\n") + "</code></pre>");
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (heading) {
      flush();
      const n = heading[1].length;
      out.push("<h" + n + ">" + inline(heading[2]) + "</h" + n + ">");
      continue;
    }
    const item = line.match(/^\s*([-*+]|\d+[.)])\s+(.*)$/);
    if (item) {
      flushPara();
      const tag = /\d/.test(item[1]) ? "ol" : "ul";
      if (!list || list.tag !== tag) {
        flushList();
        list = { tag: tag, items: [] };
      }
      list.items.push(item[2]);
      continue;
    }
    if (line.trim() === "") {
      flush();
      continue;
    }
    if (list && /^\s+\S/.test(line)) { // a wrapped list item
      list.items[list.items.length - 1] += " " + line.trim();
      continue;
    }
    flushList();
    para.push(line);
  }
  flush();
  return out.join("\n");
}
