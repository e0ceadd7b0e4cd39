'use strict';

// A streaming parser for the server's replies. Replies describe their own
// length, so the parser needs no knowledge of the commands sent:
//
//   REQUEST <tx> <attempt> <key> <deliveries> <bytes>\r\n<payload>\r\n
//   STATS n / EVENTS n / LETTERS n / ITEMS n next=<cursor>, then n lines
//   anything else: one line
//
// push() takes chunks split anywhere (inside a line, inside a payload, inside
// the CRLF) and returns the frames completed so far:
//   { line, tokens, payload?, lines? }

const { protocolError } = require('./protocol');

const LIST_HEADS = new Set(['STATS', 'EVENTS', 'LETTERS']);
const MAX_LINE = 1 << 20; // a reply line this long is not tarde talking

class ReplyParser {
  constructor() {
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
          throw protocolError('a REQUEST payload is not followed by CRLF');
        }
        // Copy: the payload outlives this chunk, which may be large.
        this._frame.payload = Buffer.from(buf.subarray(pos, pos + len));
        pos += len + 2;
        out.push(this._frame);
        this._frame = null;
        this._payloadLen = -1;
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
        if (count === 0) out.push(frame);
        else this._frame = frame;
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
