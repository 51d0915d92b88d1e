// attach.js: files attached to the next message. Images and PDFs come in
// by the Attach button, by pasting and by dropping; each shows as a chip
// that can be removed until the message is sent. They are sent the way the
// Chat Completions API takes them: an image as an image_url part with a
// data: URL, a PDF as a file part (file_data as a data: URL, filename).
"use strict";

// ATTACHABLE maps the media types the page accepts to their kind.
const ATTACHABLE = {
  "image/png": "image", "image/jpeg": "image", "image/gif": "image", "image/webp": "image",
  "application/pdf": "pdf",
};

// attachmentKind says what a File is, or "" if the page does not take it;
// a PDF without a media type (some systems give none) is known by its name.
function attachmentKind(file) {
  if (ATTACHABLE[file.type]) {
    return ATTACHABLE[file.type];
  }
  return !file.type && /\.pdf$/i.test(file.name) ? "pdf" : "";
}

function formatSize(bytes) {
  if (bytes < 1024) {
    return bytes + " B";
  }
  return bytes < 1 << 20 ? Math.round(bytes / 1024) + " KB" : (bytes / (1 << 20)).toFixed(1) + " MB";
}

function readDataURL(file, kind) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => {
      let url = String(r.result);
      if (kind === "pdf") { // the type the browser knew, or none
        url = "data:application/pdf;base64," + url.slice(url.indexOf(",") + 1);
      }
      resolve(url);
    };
    r.onerror = () => reject(new Error("could not read " + file.name));
    r.readAsDataURL(file);
  });
}

// chipElement shows one attachment; onRemove, if given, adds a remove button.
function chipElement(a, onRemove) {
  const chip = document.createElement("span");
  chip.className = "chip " + a.kind;
  if (a.kind === "image") {
    const img = document.createElement("img");
    img.className = "thumb";
    img.alt = "";
    img.src = a.url;
    chip.appendChild(img);
  } else {
    const badge = document.createElement("span");
    badge.className = "badge";
    badge.textContent = "PDF";
    chip.appendChild(badge);
  }
  const name = document.createElement("span");
  name.className = "name";
  name.textContent = a.name;
  name.title = a.name + " (" + formatSize(a.size) + ")";
  chip.appendChild(name);
  if (onRemove) {
    const rm = document.createElement("button");
    rm.type = "button";
    rm.className = "remove";
    rm.textContent = "×";
    rm.title = "remove " + a.name;
    rm.setAttribute("aria-label", "remove " + a.name);
    rm.addEventListener("click", onRemove);
    chip.appendChild(rm);
  }
  return chip;
}

// messageParts is the content of a user message: its text alone, or the
// text and the attachments as content parts.
function messageParts(text, attachments) {
  if (!attachments.length) {
    return text;
  }
  const parts = text ? [{ type: "text", text: text }] : [];
  for (const a of attachments) {
    if (a.kind === "image") {
      parts.push({ type: "image_url", image_url: { url: a.url } });
    } else {
      parts.push({ type: "file", file: { file_data: a.url, filename: a.name } });
    }
  }
  return parts;
}

// Attachments manages the chips above the prompt. els: list (the chips'
// container), input (a file input), button (opens the picker), prompt
// (takes pasted files), dropZone (takes dropped files); onError(message)
// reports a file that was refused.
class Attachments {
  constructor(els, onError) {
    this.els = els;
    this.onError = onError;
    this.items = [];
    els.button.addEventListener("click", () => els.input.click());
    els.input.addEventListener("change", () => {
      this.add(els.input.files);
      els.input.value = ""; // picking the same file again fires change again
    });
    els.prompt.addEventListener("paste", (e) => {
      const files = e.clipboardData ? e.clipboardData.files : null;
      if (files && files.length) {
        e.preventDefault(); // a pasted screenshot is an attachment, not text
        this.add(files);
      }
    });
    const zone = els.dropZone;
    const hasFiles = (e) => e.dataTransfer && Array.from(e.dataTransfer.types || []).includes("Files");
    zone.addEventListener("dragover", (e) => {
      if (hasFiles(e)) {
        e.preventDefault();
        zone.classList.add("dragging");
      }
    });
    zone.addEventListener("dragleave", (e) => {
      if (e.target === zone || !zone.contains(e.relatedTarget)) {
        zone.classList.remove("dragging");
      }
    });
    zone.addEventListener("drop", (e) => {
      zone.classList.remove("dragging");
      if (e.dataTransfer && e.dataTransfer.files.length) {
        e.preventDefault(); // the browser would open the file instead
        this.add(e.dataTransfer.files);
      }
    });
  }

  // add reads files into attachments; it resolves once all are shown.
  async add(fileList) {
    const refused = [];
    for (const file of Array.from(fileList)) {
      const kind = attachmentKind(file);
      if (!kind) {
        refused.push(file.name || "pasted data");
        continue;
      }
      try {
        const url = await readDataURL(file, kind);
        this.items.push({ kind: kind, name: file.name || (kind === "image" ? "pasted image" : "document.pdf"), size: file.size, url: url });
      } catch (err) {
        refused.push(file.name + " (" + err.message + ")");
      }
    }
    this.render();
    if (refused.length) {
      this.onError("Not attached: " + refused.join(", ") + ". The page takes images (PNG, JPEG, GIF, WebP) and PDFs.");
    }
  }

  // take returns the attachments and empties the list (the message is sent).
  take() {
    const items = this.items;
    this.items = [];
    this.render();
    return items;
  }

  // restore puts attachments back (a message that failed), before any added since.
  restore(items) {
    this.items = items.concat(this.items);
    this.render();
  }

  render() {
    const list = this.els.list;
    list.textContent = "";
    this.items.forEach((a) => {
      list.appendChild(chipElement(a, () => {
        this.items = this.items.filter((x) => x !== a);
        this.render();
      }));
    });
    list.hidden = this.items.length === 0;
  }
}
