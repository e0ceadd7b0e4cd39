'use strict';

// Tokens, argument checks and reply decoding for protocol version 1
// (net/PROTOCOL.md). Everything user-supplied passes through one of the
// check/format functions below before it is written, so user text can never
// break the line framing.

const { connectionError } = require('./errors');

const TX_ID_RE = /^[\x21-\x7E]{1,200}$/;
const QUEUE_RE = /^[A-Za-z0-9_.-]{1,64}$/;
const TOKEN_RE = /^[\x21-\x7E]{1,200}$/;
const WIRE_TOKEN_RE = /^[\x21-\x7E]+$/;
const DUR_RE = /^(\d{1,15})(ms|s|m|h|d)?$/;
const DECIMAL_RE = /^\d{1,15}(\.\d{1,15})?$/;
const WHOLE_RE = /^\d{1,15}$/;
const OPTION_NAME_RE = /^[a-z][a-z0-9_]{0,63}$/;

const UNIT_MS = { ms: 1, s: 1000, m: 60000, h: 3600000, d: 86400000 };
const MAX_DURATION_MS = 3650 * 86400000; // 3650d, the protocol's upper bound

const OUTCOMES = ['SUCCESS', 'CANCELLED', 'TRANSIENT', 'REJECTED'];
const RESOLUTIONS = ['SUCCEEDED', 'FAILED'];
const SUMMARY_STATUSES = new Set(['CREATED', 'EXISTS', 'OK', 'BURIED', 'STALE', 'CONFLICT']);

function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? v.slice(0, 40) + '...' : v);
  return typeof v === 'object' ? (v === null ? 'null' : 'an object') : String(v);
}

function checkString(name, v) {
  if (typeof v !== 'string') throw new TypeError(`${name} must be a string, got ${describe(v)}`);
}

function checkTxId(v, name = 'txId') {
  checkString(name, v);
  if (!TX_ID_RE.test(v)) {
    throw new RangeError(`${name} must be 1 to 200 bytes from '!' (0x21) to '~' (0x7E), no spaces or line breaks; got ${describe(v)}`);
  }
  return v;
}

function checkQueue(v, name = 'queue') {
  checkString(name, v);
  if (!QUEUE_RE.test(v)) {
    throw new RangeError(`${name} must be 1 to 64 characters of A-Z a-z 0-9 _ . -; got ${describe(v)}`);
  }
  return v;
}

function checkReason(v, name = 'reason') {
  checkString(name, v);
  if (!TOKEN_RE.test(v)) {
    throw new RangeError(`${name} must be 1 to 200 bytes from 0x21 to 0x7E (no spaces or line breaks); got ${describe(v)}`);
  }
  return v;
}

function checkWhole(v, name, min, max) {
  let n = v;
  if (typeof v === 'string' && WHOLE_RE.test(v)) n = Number(v);
  if (typeof n !== 'number') throw new TypeError(`${name} must be a whole number, got ${describe(v)}`);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new RangeError(`${name} must be a whole number from ${min} to ${max}, got ${describe(v)}`);
  }
  return n;
}

function checkAttempt(v, name = 'attempt') {
  return checkWhole(v, name, 1, 1000);
}

/** Milliseconds (a number) or a protocol duration string ("250ms", "5s", "2h") -> wire form. */
function formatDuration(v, name) {
  if (typeof v === 'number') {
    if (!Number.isInteger(v) || v < 0 || v > MAX_DURATION_MS) {
      throw new RangeError(`${name} must be a whole number of milliseconds from 0 to ${MAX_DURATION_MS} (3650d), got ${describe(v)}`);
    }
    return `${v}ms`;
  }
  if (typeof v === 'string') {
    const m = DUR_RE.exec(v);
    if (!m) throw new RangeError(`${name} must be milliseconds or a duration like "250ms", "5s", "2m", "2h", "1d"; got ${describe(v)}`);
    if (Number(m[1]) * UNIT_MS[m[2] || 'ms'] > MAX_DURATION_MS) {
      throw new RangeError(`${name} must be at most 3650d, got ${describe(v)}`);
    }
    return v;
  }
  throw new TypeError(`${name} must be a number of milliseconds or a duration string, got ${describe(v)}`);
}

/** A protocol duration ("2h", "0ms", "15") -> milliseconds. */
function parseDuration(s) {
  const m = DUR_RE.exec(s);
  if (!m) return NaN;
  return Number(m[1]) * UNIT_MS[m[2] || 'ms'];
}

/** A decimal number (2, 1.6, 0.1): digits with an optional fraction, no sign or exponent. */
function formatDecimal(v, name) {
  if (typeof v === 'string') {
    if (!DECIMAL_RE.test(v)) throw new RangeError(`${name} must be a decimal number like 2 or 1.6, got ${describe(v)}`);
    return v;
  }
  if (typeof v !== 'number') throw new TypeError(`${name} must be a number, got ${describe(v)}`);
  if (!Number.isFinite(v) || v < 0 || v > 1e15) throw new RangeError(`${name} must be a finite number from 0, got ${describe(v)}`);
  let s = String(v);
  if (/e/i.test(s)) s = v.toFixed(15).replace(/0+$/, '').replace(/\.$/, '');
  if (!DECIMAL_RE.test(s)) throw new RangeError(`${name} cannot be written as a protocol decimal: ${describe(v)}`);
  return s;
}

function formatBool(v, name) {
  if (v === true || v === 1 || v === '1') return '1';
  if (v === false || v === 0 || v === '0') return '0';
  throw new TypeError(`${name} must be true or false, got ${describe(v)}`);
}

function formatWholeOption(v, name) {
  return String(checkWhole(v, name, 0, 1e15));
}

function camelToSnake(k) {
  return k.replace(/[A-Z]/g, (c) => '_' + c.toLowerCase());
}

function snakeToCamel(k) {
  return k.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());
}

function checkOptions(options, name) {
  if (options === undefined || options === null) return {};
  if (typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${name} must be an object, got ${describe(options)}`);
  }
  return options;
}

// ENQUEUE options: camelCase name -> [wire name, formatter].
const ENQUEUE_OPTIONS = {
  maxAttempts: ['max_attempts', formatWholeOption],
  base: ['base', formatDuration],
  factor: ['factor', formatDecimal],
  cap: ['cap', formatDuration],
  jitter: ['jitter', formatDecimal],
  strictCap: ['strict_cap', formatBool],
  deadline: ['deadline', formatDuration],
  sent: ['sent', formatBool],
  delay: ['delay', formatDuration],
};

// CONFIG settings with a known form; any other lower-case name is passed
// through (a newer server may know it) and the server judges it.
const CONFIG_SETTINGS = {
  max_attempts: formatWholeOption,
  base: formatDuration,
  factor: formatDecimal,
  cap: formatDuration,
  jitter: formatDecimal,
  strict_cap: formatBool,
  transient_base: formatDuration,
  transient_factor: formatDecimal,
  transient_cap: formatDuration,
  max_transient: formatWholeOption,
  lease: formatDuration,
  max_deliveries: formatWholeOption,
  rate: formatDecimal,
  response_timeout: formatDuration,
  breaker: formatBool,
  retention: formatDuration,
  history_max: formatWholeOption,
  stuck_after: formatDuration,
};

function enqueueOptionTokens(options) {
  const opts = checkOptions(options, 'options');
  const tokens = [];
  for (const key of Object.keys(opts)) {
    const value = opts[key];
    if (value === undefined) continue;
    const spec = ENQUEUE_OPTIONS[key] || ENQUEUE_OPTIONS[snakeToCamel(key)];
    if (!spec) {
      throw new RangeError(`unknown ENQUEUE option ${describe(key)}; known: ${Object.keys(ENQUEUE_OPTIONS).join(', ')}`);
    }
    tokens.push(`${spec[0]}=${spec[1](value, key)}`);
  }
  return tokens;
}

function configTokens(settings) {
  const s = checkOptions(settings, 'settings');
  const tokens = [];
  for (const key of Object.keys(s)) {
    const value = s[key];
    if (value === undefined) continue;
    const wire = camelToSnake(key);
    if (!OPTION_NAME_RE.test(wire)) throw new RangeError(`bad CONFIG setting name ${describe(key)}`);
    const fmt = CONFIG_SETTINGS[wire];
    let text;
    if (fmt) {
      text = fmt(value, key);
    } else if (typeof value === 'number') {
      text = formatDecimal(value, key);
    } else if (typeof value === 'boolean') {
      text = formatBool(value, key);
    } else if (typeof value === 'string' && TOKEN_RE.test(value)) {
      text = value;
    } else {
      throw new RangeError(`CONFIG setting ${describe(key)} must be a number or a token, got ${describe(value)}`);
    }
    tokens.push(`${wire}=${text}`);
  }
  return tokens;
}

function toPayload(payload) {
  if (payload === undefined || payload === null) return Buffer.alloc(0);
  if (Buffer.isBuffer(payload)) return payload;
  if (typeof payload === 'string') return Buffer.from(payload, 'utf8');
  if (payload instanceof Uint8Array) return Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  throw new TypeError(`payload must be a Buffer, a Uint8Array or a string, got ${describe(payload)}`);
}

const CRLF = Buffer.from('\r\n');

/** Tokens (already checked) and an optional payload -> the bytes of one request. */
function encodeCommand(tokens, payload) {
  // Last line of defence: whatever reaches the wire is a sequence of
  // space-free, CR/LF-free printable tokens.
  for (const t of tokens) {
    if (typeof t !== 'string' || !WIRE_TOKEN_RE.test(t)) {
      throw new RangeError(`refusing to send token ${describe(t)}: it would break the protocol framing`);
    }
  }
  if (payload === undefined) return Buffer.from(tokens.join(' ') + '\r\n', 'latin1');
  const head = Buffer.from(tokens.join(' ') + ' ' + payload.length + '\r\n', 'latin1');
  return Buffer.concat([head, payload, CRLF], head.length + payload.length + 2);
}

// ---- replies ----

function protocolError(message) {
  return connectionError('EPROTO', `tarde protocol: ${message}`);
}

function toNumber(s, what) {
  if (!/^\d+$/.test(s)) throw protocolError(`expected a number for ${what}, got ${JSON.stringify(s)}`);
  return Number(s);
}

/** `<STATUS> <tx_id> <state> <attempt> <next_attempt> <next_fire_at>` or `NOT_FOUND <tx_id>`. */
function decodeSummary(frame) {
  const t = frame.tokens;
  if (t[0] === 'NOT_FOUND' && t.length === 2) {
    return { status: 'NOT_FOUND', txId: t[1], state: null, attempt: null, nextAttempt: null, nextFireAt: null };
  }
  if (!SUMMARY_STATUSES.has(t[0]) || t.length !== 6) throw protocolError(`unexpected reply ${JSON.stringify(frame.line)}`);
  return {
    status: t[0],
    txId: t[1],
    state: t[2],
    attempt: toNumber(t[3], 'attempt'),
    nextAttempt: toNumber(t[4], 'next_attempt'),
    nextFireAt: toNumber(t[5], 'next_fire_at'),
  };
}

const STRING_FIELDS = new Set(['id', 'tx', 'queue', 'state', 'reason', 'from', 'to', 'cause', 'key', 'last_error']);
const RENAMED_FIELDS = { id: 'txId', tx: 'txId' };

/** `name=value` tokens -> an object with camelCase names; numbers as numbers, `-` as null. */
function decodeFields(tokens, start) {
  const out = {};
  for (let i = start; i < tokens.length; i++) {
    const tok = tokens[i];
    const eq = tok.indexOf('=');
    if (eq <= 0) throw protocolError(`expected name=value, got ${JSON.stringify(tok)}`);
    const name = tok.slice(0, eq);
    const raw = tok.slice(eq + 1);
    let value;
    if (STRING_FIELDS.has(name)) value = raw === '-' && name !== 'id' && name !== 'tx' ? null : raw;
    else if (/^\d+$/.test(raw)) value = Number(raw);
    else value = raw === '-' ? null : raw;
    out[RENAMED_FIELDS[name] || snakeToCamel(name)] = value;
  }
  return out;
}

function decodeTx(frame) {
  const t = frame.tokens;
  if (t[0] === 'NOT_FOUND' && t.length === 2) return null;
  if (t[0] !== 'TX') throw protocolError(`unexpected reply to GET ${JSON.stringify(frame.line)}`);
  const tx = renameDeliveries(decodeFields(t, 1));
  if (frame.payload) tx.payload = frame.payload;
  return tx;
}

function decodeRequest(frame) {
  const t = frame.tokens;
  if (t[0] === 'EMPTY' && t.length === 1) return null;
  if (t[0] !== 'REQUEST' || t.length !== 6) throw protocolError(`unexpected reply to RESERVE ${JSON.stringify(frame.line)}`);
  return {
    txId: t[1],
    attempt: toNumber(t[2], 'attempt'),
    key: t[3],
    handouts: toNumber(t[4], 'handouts'),
    payload: frame.payload,
  };
}

/** A field an older server named `deliveries`: renamed `failedDeliveries`. */
function renameDeliveries(fields) {
  if (fields.deliveries !== undefined && fields.failedDeliveries === undefined) {
    fields.failedDeliveries = fields.deliveries;
    delete fields.deliveries;
  }
  return fields;
}

/** `<word> n` (REDRIVEN 3): n. */
function decodeCount(word) {
  return (frame) => {
    const t = frame.tokens;
    if (t[0] !== word || t.length !== 2) throw protocolError(`expected ${word} n, got ${JSON.stringify(frame.line)}`);
    return toNumber(t[1], word);
  };
}

/** `PAUSED <queue>` / `RESUMED <queue>`: the word. */
function expectQueueWord(word, queue) {
  return (frame) => {
    const t = frame.tokens;
    if (t[0] !== word || t.length !== 2 || t[1] !== queue) throw protocolError(`expected ${word} ${queue}, got ${JSON.stringify(frame.line)}`);
    return word;
  };
}

const QUEUES_MAX = 16; // PROTOCOL.md: RESERVE names at most 16 queues

/** RESERVE's first token: one queue, or an array of distinct queues joined by commas. */
function queueList(queue) {
  if (!Array.isArray(queue)) return checkQueue(queue);
  if (queue.length === 0 || queue.length > QUEUES_MAX) {
    throw new RangeError(`reserve takes 1 to ${QUEUES_MAX} queues, got ${queue.length}`);
  }
  for (const q of queue) checkQueue(q);
  if (new Set(queue).size !== queue.length) throw new RangeError('a queue is named twice');
  return queue.join(',');
}

/** The filter and limit options of REDRIVE_ALL and RESOLVE_ALL. */
function bulkTokens(options) {
  const o = options == null ? {} : options;
  const tokens = [];
  if (o.prefix !== undefined && o.prefix !== null) tokens.push(`prefix=${checkTxId(o.prefix)}`);
  if (o.lastError !== undefined && o.lastError !== null) tokens.push(`last_error=${checkReason(o.lastError)}`);
  if (o.limit !== undefined && o.limit !== null) tokens.push(`limit=${checkWhole(o.limit, 'limit', 1, 10000)}`);
  return tokens;
}

function decodeList(head, item) {
  return (frame) => {
    const t = frame.tokens;
    if (head === 'EVENTS' && t[0] === 'NOT_FOUND' && t.length === 2) return null;
    if (t[0] !== head || !frame.lines) throw protocolError(`expected ${head}, got ${JSON.stringify(frame.line)}`);
    return frame.lines.map((line, i) => {
      const lt = line.split(' ').filter(Boolean);
      if (lt[0] !== item) throw protocolError(`expected ${item}, got ${JSON.stringify(line)}`);
      const fields = decodeFields(lt, 1);
      if (item !== 'LETTER') return fields;
      if (frame.payloads) fields.payload = frame.payloads[i];
      return renameDeliveries(fields);
    });
  };
}

const decodeEventList = decodeList('EVENTS', 'EVENT');

// Fields of an EVENT line that servers older than them do not send, with
// the value each gets then: a timer fire's due instant and lateness, the
// event's number in the transaction's life, and the marker of a bounded
// history (events right before this one that are no longer kept).
const EVENT_DEFAULTS = { due: null, late: null, seq: null, dropped: 0 };

/** HISTORY: the EVENT lines, each with due, late, seq and dropped (defaults when absent). */
function decodeEvents(frame) {
  const events = decodeEventList(frame);
  if (events === null) return null;
  return events.map((e) => {
    const out = { ...e };
    for (const [name, fallback] of Object.entries(EVENT_DEFAULTS)) {
      const v = e[name];
      if (v === undefined || v === null) out[name] = fallback;
      else if (typeof v !== 'number') throw protocolError(`expected a number for ${name}, got ${JSON.stringify(v)}`);
    }
    return out;
  });
}
const decodeLetters = decodeList('LETTERS', 'LETTER');
const decodeItemLines = decodeList('ITEMS', 'ITEM');

/** LIST's states, as the protocol spells them. */
const LIST_STATES = new Set(['ready', 'leased', 'in_flight', 'scheduled', 'succeeded', 'failed', 'dead']);
const CURSOR_RE = /^[\x21-\x7E]{1,201}$/;

/** `LIST q state [after=] [limit=] [prefix=] [reason=]` as tokens, every argument checked. */
function listTokens(queue, state, options) {
  checkQueue(queue);
  checkString('state', state);
  if (!LIST_STATES.has(state)) {
    throw new RangeError(`state must be one of ${[...LIST_STATES].join(', ')}; got ${describe(state)}`);
  }
  const o = options == null ? {} : options;
  const tokens = ['LIST', queue, state];
  if (o.after !== undefined && o.after !== null) {
    checkString('after', o.after);
    if (!CURSOR_RE.test(o.after)) throw new RangeError(`after must be a cursor from a previous page; got ${describe(o.after)}`);
    tokens.push(`after=${o.after}`);
  }
  if (o.limit !== undefined && o.limit !== null) tokens.push(`limit=${checkWhole(o.limit, 'limit', 1, 1000)}`);
  if (o.prefix !== undefined && o.prefix !== null) tokens.push(`prefix=${checkTxId(o.prefix, 'prefix')}`);
  if (o.reason !== undefined && o.reason !== null) tokens.push(`reason=${checkReason(o.reason)}`);
  return tokens;
}

/** `ITEMS n next=<cursor|->` then n ITEM lines -> { items, next } (next null on the last page). */
function decodeListPage(frame) {
  const t = frame.tokens;
  if (t[0] !== 'ITEMS' || t.length !== 3 || !t[2].startsWith('next=') || t[2] === 'next=') {
    throw protocolError(`expected ITEMS n next=cursor, got ${JSON.stringify(frame.line)}`);
  }
  const cursor = t[2].slice('next='.length);
  return { items: decodeItemLines(frame), next: cursor === '-' ? null : cursor };
}

function decodeStats(frame) {
  if (frame.tokens[0] !== 'STATS' || !frame.lines) throw protocolError(`expected STATS, got ${JSON.stringify(frame.line)}`);
  const out = {};
  for (const line of frame.lines) {
    const lt = line.split(' ').filter(Boolean);
    if (lt.length !== 2) throw protocolError(`bad STATS line ${JSON.stringify(line)}`);
    const n = Number(lt[1]);
    out[lt[0]] = Number.isFinite(n) ? n : lt[1];
  }
  return out;
}

function decodeBackup(frame) {
  const t = frame.tokens;
  if (t[0] !== 'BACKUP') throw protocolError(`expected BACKUP, got ${JSON.stringify(frame.line)}`);
  const raw = {};
  for (const tok of t.slice(1)) {
    const eq = tok.indexOf('=');
    if (eq <= 0) throw protocolError(`expected name=value, got ${JSON.stringify(tok)}`);
    raw[tok.slice(0, eq)] = tok.slice(eq + 1);
  }
  const out = {};
  for (const [name, key] of [['id', 'id'], ['bytes', 'bytes'], ['files', 'files'], ['took_ms', 'tookMs']]) {
    if (!/^\d+$/.test(raw[name] || '')) throw protocolError(`bad BACKUP reply ${JSON.stringify(frame.line)}`);
    out[key] = Number(raw[name]);
  }
  return out;
}

function configValue(raw) {
  if (DECIMAL_RE.test(raw)) return Number(raw);
  if (DUR_RE.test(raw)) return parseDuration(raw);
  return raw;
}

function decodeConfig(frame) {
  const t = frame.tokens;
  if (t[0] !== 'CONFIG' || t.length < 2) throw protocolError(`expected CONFIG, got ${JSON.stringify(frame.line)}`);
  const out = {};
  for (let i = 2; i < t.length; i++) {
    const eq = t[i].indexOf('=');
    if (eq <= 0) throw protocolError(`bad CONFIG setting ${JSON.stringify(t[i])}`);
    out[snakeToCamel(t[i].slice(0, eq))] = configValue(t[i].slice(eq + 1));
  }
  return out;
}

function expectWord(word) {
  return (frame) => {
    if (frame.tokens[0] !== word || frame.tokens.length !== 1) throw protocolError(`expected ${word}, got ${JSON.stringify(frame.line)}`);
    return word;
  };
}

module.exports = {
  MAX_DURATION_MS,
  OUTCOMES,
  RESOLUTIONS,
  TOKEN_RE,
  WIRE_TOKEN_RE,
  checkTxId,
  checkQueue,
  checkReason,
  checkAttempt,
  checkWhole,
  checkString,
  formatDuration,
  parseDuration,
  formatDecimal,
  enqueueOptionTokens,
  configTokens,
  toPayload,
  encodeCommand,
  protocolError,
  decodeSummary,
  decodeTx,
  decodeRequest,
  decodeEvents,
  decodeLetters,
  decodeListPage,
  listTokens,
  decodeStats,
  decodeConfig,
  decodeBackup,
  decodeCount,
  expectWord,
  expectQueueWord,
  queueList,
  bulkTokens,
  describe,
};
