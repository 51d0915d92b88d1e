// app.js: the chat page. It keeps the conversation in memory, streams each
// reply from /v1/chat/completions and renders it as it arrives.
"use strict";

(function () {
  const KEY_STORAGE = "splash.apiKey";
  const $ = (id) => document.getElementById(id);
  const ui = {
    model: $("model-name"), stats: $("stats"), key: $("api-key"), newChat: $("new-chat"),
    messages: $("messages"), error: $("error"), form: $("composer"), prompt: $("prompt"),
    send: $("send"), stop: $("stop"),
  };
  const attachments = new Attachments({
    list: $("attachments"), input: $("file-input"), button: $("attach"), prompt: ui.prompt,
    dropZone: document.body,
  }, showError);
  const state = {
    model: "",        // id from /v1/models, sent as "model"
    history: [],      // {role, content} turns sent with every request; a user turn
                      // with attachments has content parts (see messageParts)
    controller: null, // AbortController of the stream in progress
  };

  function headers() {
    const h = { "Content-Type": "application/json" };
    const key = ui.key.value.trim();
    if (key) {
      h.Authorization = "Bearer " + key;
    }
    return h;
  }

  async function errorText(res) {
    let msg = res.status + " " + res.statusText;
    try {
      const body = await res.json();
      if (body.error && body.error.message) {
        msg = body.error.message;
      }
    } catch (_) { /* not JSON: keep the status line */ }
    if (res.status === 401) {
      msg += " (enter the server's API key at the top)";
    }
    return msg;
  }

  function showError(msg) {
    ui.error.textContent = msg;
    ui.error.hidden = !msg;
  }

  async function loadModel() {
    try {
      const res = await fetch("/v1/models", { headers: headers() });
      if (!res.ok) {
        throw new Error(await errorText(res));
      }
      const body = await res.json();
      state.model = body.data && body.data.length ? body.data[0].id : "";
      ui.model.textContent = state.model || "(none)";
      showError("");
    } catch (err) {
      ui.model.textContent = "unavailable";
      showError("Could not list models: " + err.message);
    }
  }

  // RateMeter measures a reply. The rate counts content and reasoning
  // deltas (one per token as the server streams them) between the first
  // and the last one, so prompt processing is reported apart, as the time
  // to the first token. The token count shown is the server's usage once
  // it arrives. Over a span too short to time (deltas that arrive together
  // in one network read) no rate is shown rather than a wild one.
  class RateMeter {
    constructor() {
      this.start = performance.now();
      this.first = 0;
      this.last = 0;
      this.deltas = 0;
      this.tokens = 0; // from usage; 0 until it arrives
    }
    tick() {
      const now = performance.now();
      if (!this.first) {
        this.first = now;
      }
      this.last = now;
      this.deltas++;
    }
    usage(u) {
      if (u && typeof u.completion_tokens === "number") {
        this.tokens = u.completion_tokens;
      }
    }
    text() {
      if (!this.first) {
        return "waiting for the first token…";
      }
      const ttft = Math.round(this.first - this.start);
      const secs = (this.last - this.first) / 1000;
      const rate = this.deltas > 1 && secs >= 0.1 ? ((this.deltas - 1) / secs).toFixed(1) : "–";
      return (this.tokens || this.deltas) + " tokens · " + rate + " tok/s · first token " + ttft + " ms";
    }
  }

  function scrollToEnd(force) {
    const m = ui.messages;
    if (force || m.scrollHeight - m.scrollTop - m.clientHeight < 80) {
      m.scrollTop = m.scrollHeight;
    }
  }

  function addUserMessage(text, files) {
    const el = document.createElement("div");
    el.className = "msg user";
    if (files.length) {
      const list = document.createElement("div");
      list.className = "attached";
      files.forEach((a) => list.appendChild(chipElement(a, null)));
      el.appendChild(list);
    }
    el.appendChild(document.createTextNode(text));
    ui.messages.appendChild(el);
    scrollToEnd(true);
  }

  // addAssistantMessage returns a view of one reply: it renders at most
  // once per animation frame however fast the deltas come.
  function addAssistantMessage() {
    const el = document.createElement("div");
    el.className = "msg assistant";
    el.innerHTML = '<div class="role"></div><details class="reasoning" hidden open><summary>Thinking…</summary>' +
      '<div class="thoughts"></div></details><div class="content"></div><div class="note"></div>';
    el.querySelector(".role").textContent = state.model || "assistant";
    ui.messages.appendChild(el);
    const details = el.querySelector("details");
    const parts = {
      thoughts: el.querySelector(".thoughts"), content: el.querySelector(".content"),
      note: el.querySelector(".note"),
    };
    let answer = "", thoughts = "", pending = false;
    const render = () => {
      pending = false;
      if (thoughts) {
        details.hidden = false;
        parts.thoughts.textContent = thoughts;
      }
      if (answer) {
        if (details.open && details.dataset.auto !== "done") {
          details.open = false; // fold the reasoning once the answer starts
          details.dataset.auto = "done";
          details.querySelector("summary").textContent = "Reasoning";
        }
        parts.content.innerHTML = renderMarkdown(answer);
      }
      scrollToEnd(false);
    };
    const schedule = () => {
      if (!pending) {
        pending = true;
        requestAnimationFrame(render);
      }
    };
    return {
      el: el,
      addThoughts(t) { thoughts += t; schedule(); },
      addAnswer(t) { answer += t; schedule(); },
      answer() { return answer; },
      finish(note, failed) {
        render();
        if (thoughts) {
          details.querySelector("summary").textContent = "Reasoning";
        }
        parts.note.textContent = note;
        el.classList.toggle("failed", !!failed);
        el.classList.add("done");
      },
    };
  }

  function setBusy(busy) {
    ui.send.disabled = busy;
    ui.send.hidden = busy;
    ui.stop.hidden = !busy;
  }

  async function send(text, files) {
    const history = state.history; // "New chat" may replace it mid-stream
    history.push({ role: "user", content: messageParts(text, files) });
    addUserMessage(text, files);
    const view = addAssistantMessage();
    const controller = new AbortController();
    const meter = new RateMeter();
    state.controller = controller;
    setBusy(true);
    ui.stats.textContent = meter.text();
    let finish = "";
    try {
      const res = await fetch("/v1/chat/completions", {
        method: "POST", headers: headers(), signal: controller.signal,
        body: JSON.stringify({
          model: state.model || undefined, messages: history, stream: true,
          stream_options: { include_usage: true },
        }),
      });
      if (!res.ok) {
        throw new Error(await errorText(res));
      }
      await readSSE(res, (ev) => {
        if (ev.data === "[DONE]") {
          return;
        }
        const chunk = JSON.parse(ev.data);
        if (chunk.error) {
          throw new Error(chunk.error.message || "the server ended the stream with an error");
        }
        meter.usage(chunk.usage);
        const choice = chunk.choices && chunk.choices[0];
        if (choice) {
          const delta = choice.delta || {};
          if (delta.reasoning_content) {
            meter.tick();
            view.addThoughts(delta.reasoning_content);
          }
          if (delta.content) {
            meter.tick();
            view.addAnswer(delta.content);
          }
          if (choice.finish_reason) {
            finish = choice.finish_reason;
          }
        }
        ui.stats.textContent = meter.text();
      });
      history.push({ role: "assistant", content: view.answer() });
      view.finish(finish === "length" ? "cut off: token limit reached" : "", false);
    } catch (err) {
      if (controller.signal.aborted) {
        view.finish("stopped", false);
      } else {
        view.finish("error: " + err.message, true);
      }
      // Keep the partial answer so the conversation stays user/assistant
      // alternating; a turn with no answer at all is dropped.
      if (view.answer()) {
        history.push({ role: "assistant", content: view.answer() });
      } else {
        history.pop();
        // Give a refused message back to the composer, so the user can
        // drop the attachment the server would not take and send again.
        attachments.restore(files);
        if (!ui.prompt.value) {
          ui.prompt.value = text;
        }
      }
    } finally {
      state.controller = null;
      setBusy(false);
      ui.stats.textContent = meter.first ? meter.text() : ""; // no token came: nothing to time
    }
  }

  ui.form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = ui.prompt.value.trim();
    if ((!text && !attachments.items.length) || state.controller) {
      return;
    }
    ui.prompt.value = "";
    showError("");
    send(text, attachments.take());
  });
  ui.prompt.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      ui.form.requestSubmit();
    }
  });
  ui.stop.addEventListener("click", () => {
    if (state.controller) {
      state.controller.abort(); // closes the connection: the server cancels the generation
    }
  });
  ui.newChat.addEventListener("click", () => {
    if (state.controller) {
      state.controller.abort();
    }
    state.history = [];
    ui.messages.textContent = "";
    ui.stats.textContent = "";
  });
  ui.key.value = localStorage.getItem(KEY_STORAGE) || "";
  ui.key.addEventListener("change", () => {
    localStorage.setItem(KEY_STORAGE, ui.key.value.trim());
    loadModel();
  });
  loadModel();
  ui.prompt.focus();
})();
