// The raters' protocol as the page knows it (playground/rating/web/protocol.py defines it;
// docs/rater-protocol.md is its reference). A test checks these names and numbers against
// the server's CloseCode.

/** Why the server closed the page's WebSocket. */
export const CLOSE = Object.freeze({
  ENDED: 4000,
  REPLACED: 4002,
  TOO_FAST: 4008,
  BAD_FRAME: 4009,
});

/** Close codes after which the page does not reconnect by itself. */
export const FINAL = new Set([CLOSE.ENDED, CLOSE.REPLACED, CLOSE.BAD_FRAME]);
