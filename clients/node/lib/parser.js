'use strict';

// A streaming parser for the server's replies. Replies describe their own
// length, so the parser needs to know only one thing of the commands sent:
// whether a GET or DEADLETTERS asked for payloads (payload=1), which it asks
// `wantsPayloads(i)` for the i-th reply completed by this push:
//
//   REQUEST <tx> <attempt> <key> <handouts> <bytes>\r\n<payload>\r\n
//   STATS n / EVENTS n / LETTERS n / ITEMS n next=<cursor>, then n lines
//   with payloads: TX ... payload_bytes=n, or each LETTER line, then
//     n bytes and CRLF
//   anything else: one line
//
// push() takes chunks split anywhere (inside a line, inside a payload, inside
// the CRLF) and returns the frames completed so far:
//   { line, tokens, payload?, lines? }

const { protocolError } = require('./protocol');

const LIST_HEADS = new Set(['STATS', 'EVENTS', 'LETTERS']);
const MAX_LINE = 1 << 20; // a reply line this long is not tarde talking

// The n of a line's payload_bytes=n.
function payloadBytes(line) {
  const m = / payload_bytes=(\d+)(?: |$)/.exec(line);
  if (!m) throw protocolError(`no payload_bytes in ${JSON.stringify(line)}`);
  return Number(m[1]);
}

class ReplyParser {
  constructor(wantsPayloads) {
    this._wantsPayloads = wantsPayloads || (() => false);
    this._parts = [];
    this._partsLen = 0;
    this._need = 1; // bytes needed before parsing can progress
    this._frame = null; // a frame waiting for its payload or its lines
    this._payloadLen = -1; // >= 0 while the frame waits for a payload
  }

  push(chunk) {
    this._parts.push(chunk);
    this._partsLen += chunk.length;
    if (this._partsLen < this._need) return [];
    const buf = this._parts.length === 1 ? this._parts[0] : Buffer.concat(this._parts, this._partsLen);
    const out = [];
    let pos = 0;
    for (;;) {
      if (this._payloadLen >= 0) {
        const len = this._payloadLen;
        if (buf.length - pos < len + 2) {
          this._need = len + 2;
          break;
        }
        if (buf[pos + len] !== 13 || buf[pos + len + 1] !== 10) {
          throw protocolError('a payload is not followed by CRLF');
        }
        // Copy: the payload outlives this chunk, which may be large.
        const payload = Buffer.from(buf.subarray(pos, pos + len));
        pos += len + 2;
        this._payloadLen = -1;
        if (this._frame.lines) {
          // a LETTER's payload
          this._frame.payloads.push(payload);
          if (this._frame.lines.length < this._frame.count) continue;
        } else {
          this._frame.payload = payload;
        }
        out.push(this._frame);
        this._frame = null;
        continue;
      }
      const nl = buf.indexOf(10, pos);
      if (nl < 0) {
        if (buf.length - pos > MAX_LINE) throw protocolError(`a reply line longer than ${MAX_LINE} bytes`);
        this._need = buf.length - pos + 1;
        break;
      }
      const end = nl > pos && buf[nl - 1] === 13 ? nl - 1 : nl;
      const line = buf.toString('utf8', pos, end);
      pos = nl + 1;
      if (this._frame) {
        // a line of a STATS / EVENTS / LETTERS / ITEMS list
        this._frame.lines.push(line);
        if (this._frame.payloads) {
          this._payloadLen = payloadBytes(line);
          continue;
        }
        if (this._frame.lines.length === this._frame.count) {
          out.push(this._frame);
          this._frame = null;
        }
        continue;
      }
      const tokens = line.split(' ').filter(Boolean);
      const head = tokens[0];
      if (head === 'REQUEST') {
        const lenTok = tokens[tokens.length - 1];
        if (tokens.length < 2 || !/^\d+$/.test(lenTok)) throw protocolError(`bad REQUEST line ${JSON.stringify(line)}`);
        this._frame = { line, tokens, payload: null };
        this._payloadLen = Number(lenTok);
        continue;
      }
      if ((LIST_HEADS.has(head) && tokens.length === 2) || (head === 'ITEMS' && tokens.length === 3)) {
        if (!/^\d+$/.test(tokens[1])) throw protocolError(`bad ${head} count in ${JSON.stringify(line)}`);
        const count = Number(tokens[1]);
        const frame = { line, tokens, lines: [], count };
        if (head === 'LETTERS' && this._wantsPayloads(out.length)) frame.payloads = [];
        if (count === 0) out.push(frame);
        else this._frame = frame;
        continue;
      }
      if (head === 'TX' && this._wantsPayloads(out.length)) {
        this._frame = { line, tokens, payload: null };
        this._payloadLen = payloadBytes(line);
        continue;
      }
      out.push({ line, tokens });
    }
    if (pos >= buf.length) {
      this._parts = [];
      this._partsLen = 0;
      this._need = 1;
    } else {
      const rest = buf.subarray(pos);
      this._parts = [rest];
      this._partsLen = rest.length;
      if (this._payloadLen < 0) this._need = rest.length + 1;
      // else _need stays the payload's length + 2
      if (this._need <= rest.length) this._need = rest.length + 1;
    }
    return out;
  }

  /** True when no partial reply is buffered. */
  get idle() {
    return this._partsLen === 0 && this._frame === null;
  }
}

module.exports = { ReplyParser };
