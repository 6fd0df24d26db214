// The page's one WebSocket: frames out with a sequence number, frames in to a handler,
// reconnecting by itself unless the server closed it for good.
import { CLOSE, FINAL } from "/static/protocol.js";

export class Connection {
  /**
   * @param {string} url the WebSocket address
   * @param {{onFrame: (f: object) => void, onState: (s: string, code?: number) => void}} handlers
   */
  constructor(url, handlers) {
    this.url = url;
    this.handlers = handlers;
    this.seq = 0;
    this.socket = null;
    this.retry = 500;
    this.stopped = false;
  }

  open() {
    const ws = new WebSocket(this.url);
    this.socket = ws;
    ws.addEventListener("open", () => {
      this.retry = 500;
      this.handlers.onState("open");
    });
    ws.addEventListener("message", (event) => {
      let frame;
      try {
        frame = JSON.parse(event.data);
      } catch {
        return;
      }
      this.handlers.onFrame(frame);
    });
    ws.addEventListener("close", (event) => {
      if (this.socket !== ws) return;
      this.socket = null;
      if (FINAL.has(event.code)) {
        this.stopped = true;
        this.handlers.onState("closed", event.code);
        return;
      }
      this.handlers.onState("reconnecting", event.code);
      const wait = event.code === CLOSE.TOO_FAST ? 10_000 : this.retry;
      this.retry = Math.min(this.retry * 2, 10_000);
      setTimeout(() => this.open(), wait);
    });
  }

  /** Send a frame of the page's kinds; returns its seq (or -1 while disconnected). */
  send(frame) {
    if (!this.socket || this.socket.readyState !== WebSocket.OPEN) return -1;
    this.seq += 1;
    this.socket.send(JSON.stringify({ ...frame, seq: this.seq }));
    return this.seq;
  }
}
