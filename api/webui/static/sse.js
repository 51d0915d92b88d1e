// sse.js: reads a streamed fetch Response as Server-Sent Events.
// EventSource cannot POST or send an Authorization header, so the page
// reads the body itself.
"use strict";

// parseSSEBlock turns one event block into {event, data}, or null for a
// block without data (comments such as keep-alive pings).
function parseSSEBlock(block) {
  let event = "";
  const data = [];
  for (const line of block.split(/\r?\n/)) {
    if (line === "" || line.startsWith(":")) {
      continue;
    }
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) {
      value = value.slice(1);
    }
    if (field === "data") {
      data.push(value);
    } else if (field === "event") {
      event = value;
    }
  }
  return data.length ? { event: event, data: data.join("\n") } : null;
}

// readSSE calls onEvent for each event of response's body until the stream
// ends. If onEvent throws, the body is cancelled (closing the connection)
// and the error is passed on.
async function readSSE(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const drain = () => {
    for (;;) {
      const m = buffer.match(/\r?\n\r?\n/);
      if (!m) {
        return;
      }
      const ev = parseSSEBlock(buffer.slice(0, m.index));
      buffer = buffer.slice(m.index + m[0].length);
      if (ev) {
        onEvent(ev);
      }
    }
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        break;
      }
      buffer += decoder.decode(value, { stream: true });
      drain();
    }
    buffer += decoder.decode() + "\n\n";
    drain();
  } catch (err) {
    reader.cancel().catch(() => {});
    throw err;
  }
}
