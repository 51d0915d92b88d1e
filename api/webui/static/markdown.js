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

// safeURL returns an already-escaped URL when it may be a link, or "": an
// absolute http(s) or mailto URL, or a path, query or fragment of this
// site. Backslashes, spaces and control characters are refused anywhere,
// since browsers read "/\evil.com" and "/<tab>/evil.com" as "//evil.com",
// another site.
function safeURL(escaped) {
  if (/[\u0000-\u0020\u007f\\]/.test(escaped)) {
    return "";
  }
  if (/^(https?:\/\/[^/]|mailto:.)/i.test(escaped) || /^([#?]|\/(?!\/))/.test(escaped)) {
    return escaped;
  }
  return "";
}

// finder returns next(i): the first index >= i where find(from) finds
// something, or -1. Each answer is reused for every later i up to it, so a
// scan that moves forward pays for each stretch of text once.
function finder(find) {
  let from = Infinity;
  let at = -1;
  return (i) => {
    if (i < from || (at >= 0 && i > at)) {
      from = i;
      at = find(i);
    }
    return at;
  };
}

function isWord(c) {
  return c !== undefined && /\w/.test(c);
}

// InlineScanner renders one line of escaped text in one left-to-right pass:
// `code`, [links](url), **strong**, __strong__, *em* and _em_. A construct
// is taken when its closer exists; its inside is scanned as a span of its
// own. Closers are found through finders, so a line of n characters costs
// O(n) whatever it holds (the regexes this replaces went back over the rest
// of the line at every "[", which froze the page on long replies).
class InlineScanner {
  constructor(text) {
    this.text = text;
    const at = (s) => finder((i) => text.indexOf(s, i));
    this.next = { "`": at("`"), "]": at("]"), ")": at(")"), "*": at("*"), "_": at("_"), "**": at("**"), "__": at("__") };
    const space = /\s/g;
    this.next.space = finder((i) => {
      space.lastIndex = i;
      const m = space.exec(text);
      return m ? m.index : -1;
    });
  }

  // closer finds s after i and before end, or returns -1.
  closer(s, i, end) {
    const k = this.next[s](i);
    return k >= 0 && k < end ? k : -1;
  }

  // span renders text[start, end); links are off inside a link's label.
  span(start, end, links) {
    const t = this.text;
    const out = [];
    let plain = start; // start of the text not yet copied to out
    const emit = (i, html, resume) => {
      out.push(t.slice(plain, i), html);
      plain = resume;
      return resume;
    };
    for (let i = start; i < end;) {
      const c = t[i];
      let k;
      let a;
      if (c === "`" && (k = this.closer("`", i + 1, end)) > i + 1) {
        i = emit(i, "<code>" + t.slice(i + 1, k) + "</code>", k + 1);
      } else if (c === "[" && links && (a = this.link(i, end))) {
        i = emit(i, a.html, a.resume);
      } else if ((c === "*" || c === "_") && t[i + 1] === c && (k = this.closer(c + c, i + 2, end)) > i + 2) {
        i = emit(i, "<strong>" + this.span(i + 2, k, links) + "</strong>", k + 2);
      } else if ((k = this.em(i, end)) > 0) {
        i = emit(i, "<em>" + this.span(i + 1, k, links) + "</em>", k + 1);
      } else {
        i++;
      }
    }
    out.push(t.slice(plain, end));
    return out.join("");
  }

  // em returns the closer of *em* or _em_ opening at i, or -1: the next
  // delimiter, after text that does not start with a space; _ only between
  // non-word characters (snake_case stays as it is).
  em(i, end) {
    const t = this.text;
    const c = t[i];
    if ((c !== "*" && c !== "_") || i + 1 >= end || /\s/.test(t[i + 1]) || t[i + 1] === c) {
      return -1;
    }
    if (c === "_" && isWord(t[i - 1])) {
      return -1;
    }
    const k = this.closer(c, i + 1, end);
    if (k < 0 || (c === "_" && isWord(t[k + 1]))) {
      return -1;
    }
    return k;
  }

  // link renders [label](url) opening at i: {html, resume} (the index
  // after it), or null when there is none. A URL that is not safe leaves
  // only the label.
  link(i, end) {
    const t = this.text;
    const j = this.closer("]", i + 1, end);
    if (j <= i + 1 || t[j + 1] !== "(") {
      return null;
    }
    const k = this.closer(")", j + 2, end);
    const space = this.next.space(j + 2);
    if (k <= j + 2 || (space >= 0 && space < k)) {
      return null;
    }
    const label = this.span(i + 1, j, false);
    const href = safeURL(t.slice(j + 2, k));
    const html = href ? '<a href="' + href + '" target="_blank" rel="noopener noreferrer">' + label + "</a>" : label;
    return { html: html, resume: k + 1 };
  }
}

// inline renders one line of escaped text.
function inline(text) {
  return new InlineScanner(text).span(0, text.length, true);
}

// fenceLanguage returns the language of a ``` fence line ("" for none), or
// null when the line is not a fence. (Trimming and a whole-string test keep
// it linear: a regex with two runs of optional spaces around the language
// backtracked quadratically over a long line of spaces.)
function fenceLanguage(line) {
  const t = line.trim();
  if (!t.startsWith("```")) {
    return null;
  }
  const lang = t.slice(3).trim();
  return /^[\w+#.-]*$/.test(lang) ? lang : null;
}

// headingText drops a heading's closing run of #s (when a space or nothing
// precedes it) and the spaces around it, scanning back from the end.
function headingText(text) {
  let end = text.trimEnd().length;
  let hashes = end;
  while (hashes > 0 && text[hashes - 1] === "#") {
    hashes--;
  }
  if (hashes < end && (hashes === 0 || /\s/.test(text[hashes - 1]))) {
    end = hashes;
  }
  return text.slice(0, end).trimEnd();
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
    const fence = fenceLanguage(line);
    if (fence !== null) {
      flush();
      const body = [];
      for (i++; i < lines.length && lines[i].trim() !== "```"; i++) {
        body.push(lines[i]);
      }
      const cls = fence ? ' class="language-' + fence + '"' : "";
      out.push("<pre><code" + cls + ">" + body.join("\n") + "</code></pre>");
      continue;
    }
    const heading = line.match(/^(#{1,6})\s+(.*)$/);
    if (heading) {
      flush();
      const n = heading[1].length;
      out.push("<h" + n + ">" + inline(headingText(heading[2])) + "</h" + n + ">");
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
