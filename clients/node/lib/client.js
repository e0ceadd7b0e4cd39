'use strict';

const net = require('node:net');
const { EventEmitter } = require('node:events');
const { TardeError, connectionError } = require('./errors');
const { ReplyParser } = require('./parser');
const { Answer } = require('./answer');
const p = require('./protocol');

const DEFAULT_HOST = '127.0.0.1';
const DEFAULT_PORT = 7400;
const DEFAULT_TIMEOUT_MS = 10000;

function checkTimeout(v, name) {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
    throw new RangeError(`${name} must be a positive number of milliseconds, got ${p.describe(v)}`);
  }
  return v;
}

function normalizeConnectOptions(options) {
  const o = options == null ? {} : options;
  if (typeof o !== 'object') throw new TypeError('options must be an object');
  const host = o.host === undefined ? DEFAULT_HOST : o.host;
  if (typeof host !== 'string' || host.length === 0) throw new TypeError('host must be a non-empty string');
  const port = o.port === undefined ? DEFAULT_PORT : o.port;
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new RangeError(`port must be 1-65535, got ${p.describe(port)}`);
  let token = o.token;
  if (token !== undefined && token !== null) {
    if (typeof token !== 'string') throw new TypeError('token must be a string');
    if (!p.WIRE_TOKEN_RE.test(token) || token.length > 8000) {
      throw new RangeError('token must be printable ASCII without spaces or line breaks');
    }
  } else {
    token = undefined;
  }
  const timeoutMs = checkTimeout(o.timeoutMs, 'timeoutMs') ?? DEFAULT_TIMEOUT_MS;
  const connectTimeoutMs = checkTimeout(o.connectTimeoutMs, 'connectTimeoutMs') ?? timeoutMs;
  return { host, port, token, timeoutMs, connectTimeoutMs };
}

// A FIFO of pending commands; replies come back in request order.
class PendingQueue {
  constructor() {
    this._items = [];
    this._head = 0;
  }
  get length() {
    return this._items.length - this._head;
  }
  push(x) {
    this._items.push(x);
  }
  peek() {
    return this._head < this._items.length ? this._items[this._head] : undefined;
  }
  at(i) {
    return this._head + i < this._items.length ? this._items[this._head + i] : undefined;
  }
  shift() {
    if (this._head >= this._items.length) return undefined;
    const x = this._items[this._head];
    this._items[this._head++] = undefined;
    if (this._head > 1024 && this._head * 2 > this._items.length) {
      this._items = this._items.slice(this._head);
      this._head = 0;
    }
    return x;
  }
  drain() {
    const rest = this._items.slice(this._head);
    this._items = [];
    this._head = 0;
    return rest;
  }
}

/**
 * One connection to a tarde server. Commands are pipelined: each call writes
 * its request at once and its promise settles when its reply (matched in
 * order) arrives. A lost connection rejects every pending command; the client
 * never reconnects by itself (see Dispatcher for that).
 *
 * Events: 'close' (err | null) once the connection is gone.
 */
class Client extends EventEmitter {
  /**
   * Connects, then sends AUTH (when a token is given) or PING, so that a
   * refused connection (OVERLOADED, SHUTTING_DOWN, a wrong token) rejects here.
   */
  static async connect(options) {
    const client = new Client(normalizeConnectOptions(options), Client._secret);
    await client._open();
    return client;
  }

  constructor(options, secret) {
    super();
    if (secret !== Client._secret) throw new TypeError('use `await Client.connect(options)`');
    this.host = options.host;
    this.port = options.port;
    this.timeoutMs = options.timeoutMs;
    this._options = options;
    this._socket = null;
    this._pending = new PendingQueue();
    this._parser = new ReplyParser((i) => {
      const entry = this._pending.at(i);
      return entry !== undefined && entry.payloads;
    });
    this._lastDeadline = 0;
    this._timer = null;
    this._outq = [];
    this._outBytes = 0;
    this._flushScheduled = false;
    this._closedError = null; // set once the connection is unusable
    this._closePromise = null;
    this._socketClosed = null; // a promise resolved on the socket's 'close'
  }

  /** True once the connection is closed, lost, or closing. */
  get closed() {
    return this._closedError !== null;
  }

  /** Commands written whose replies have not arrived yet. */
  get pendingCount() {
    return this._pending.length;
  }

  async _open() {
    const { host, port, connectTimeoutMs, token } = this._options;
    const socket = net.connect({ host, port });
    this._socket = socket;
    this._socketClosed = new Promise((resolve) => socket.once('close', resolve));
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        cleanup();
        socket.destroy();
        reject(connectionError('ETIMEDOUT', `connecting to ${host}:${port} timed out after ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
      const onError = (err) => {
        cleanup();
        socket.destroy();
        reject(err);
      };
      const onConnect = () => {
        cleanup();
        resolve();
      };
      const cleanup = () => {
        clearTimeout(timer);
        socket.removeListener('error', onError);
        socket.removeListener('connect', onConnect);
      };
      socket.once('error', onError);
      socket.once('connect', onConnect);
    });
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this._onData(chunk));
    socket.on('error', (err) => {
      this._socketError = err;
    });
    socket.on('close', () => this._onClose());
    try {
      if (token !== undefined) await this.auth(token);
      else await this.ping();
    } catch (err) {
      this.destroy();
      throw err;
    }
  }

  // ---- plumbing ----

  _send(tokens, payload, decode, timeoutMs, bypassClosing) {
    if (this._closedError && !(bypassClosing && !this._socket.destroyed)) {
      return Promise.reject(this._reuseError());
    }
    const bytes = p.encodeCommand(tokens, payload);
    return new Promise((resolve, reject) => {
      let deadline = Date.now() + timeoutMs;
      // Replies come in order: a command can not be answered before the one
      // ahead of it, so its deadline is never earlier than that one's.
      if (deadline < this._lastDeadline) deadline = this._lastDeadline;
      this._lastDeadline = deadline;
      // A GET or DEADLETTERS with payload=1 has payloads after its lines.
      const payloads = (tokens[0] === 'GET' || tokens[0] === 'DEADLETTERS') && tokens.includes('payload=1');
      this._pending.push({ verb: tokens[0], decode, resolve, reject, deadline, payloads });
      if (this._timer === null) this._armTimer();
      this._write(bytes);
    });
  }

  _write(bytes) {
    this._outq.push(bytes);
    this._outBytes += bytes.length;
    if (!this._flushScheduled) {
      this._flushScheduled = true;
      process.nextTick(() => this._flush());
    }
  }

  _flush() {
    this._flushScheduled = false;
    if (this._outq.length === 0) return;
    const data = this._outq.length === 1 ? this._outq[0] : Buffer.concat(this._outq, this._outBytes);
    this._outq = [];
    this._outBytes = 0;
    if (!this._socket.destroyed) this._socket.write(data);
  }

  _armTimer() {
    const head = this._pending.peek();
    if (!head) {
      this._timer = null;
      return;
    }
    this._timer = setTimeout(() => this._onTimer(), Math.max(1, head.deadline - Date.now()));
    this._timer.unref();
  }

  _onTimer() {
    this._timer = null;
    const head = this._pending.peek();
    if (!head) return;
    if (Date.now() >= head.deadline) {
      this._fail(connectionError('ETIMEDOUT', `no reply to ${head.verb} from ${this.host}:${this.port} in time; connection closed`));
    } else {
      this._armTimer();
    }
  }

  _onData(chunk) {
    let frames;
    try {
      frames = this._parser.push(chunk);
    } catch (err) {
      this._fail(err);
      return;
    }
    for (const frame of frames) {
      const entry = this._pending.shift();
      if (!entry) {
        if (frame.tokens[0] === 'ERR') {
          // e.g. ERR OVERLOADED sent before any command; the server closes next.
          this._markClosed(this._tardeError(frame, null));
          continue;
        }
        this._fail(p.protocolError(`a reply nobody asked for: ${JSON.stringify(frame.line)}`));
        return;
      }
      if (frame.tokens[0] === 'ERR') {
        const err = this._tardeError(frame, entry.verb);
        if (err.closesConnection) this._markClosed(connectionError('ECONNRESET', `the server is closing the connection (${err.code})`, err));
        entry.reject(err);
        continue;
      }
      let value;
      try {
        value = entry.decode(frame);
      } catch (err) {
        entry.reject(err);
        this._fail(err);
        return;
      }
      entry.resolve(value);
    }
    if (this._pending.length === 0 && this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
  }

  _tardeError(frame, verb) {
    const code = frame.tokens[1] || 'UNKNOWN';
    const rest = frame.line.replace(/^\s*ERR\s+\S+\s?/, '');
    return new TardeError(code, rest, verb);
  }

  _markClosed(err) {
    if (!this._closedError) this._closedError = err;
  }

  _reuseError() {
    const e = this._closedError;
    const err = connectionError(e.code || 'ECONNRESET', e.message, e);
    return err;
  }

  // The connection is unusable: reject everything pending, close the socket.
  _fail(err) {
    this._markClosed(err);
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    for (const entry of this._pending.drain()) entry.reject(err);
    if (this._socket && !this._socket.destroyed) this._socket.destroy();
  }

  _onClose() {
    let err;
    if (this._socketError) {
      err = connectionError(this._socketError.code || 'ECONNRESET', `connection to ${this.host}:${this.port} lost: ${this._socketError.message}`, this._socketError);
    } else {
      err = connectionError('ECONNRESET', `connection to ${this.host}:${this.port} closed by the server`);
    }
    const hadError = this._closedError;
    this._markClosed(err);
    if (this._timer !== null) {
      clearTimeout(this._timer);
      this._timer = null;
    }
    for (const entry of this._pending.drain()) entry.reject(hadError && hadError.code !== 'ERR_TARDE_CLOSED' ? hadError : err);
    this.emit('close', this._closedError.code === 'ERR_TARDE_CLOSED' ? null : this._closedError);
  }

  // ---- lifecycle ----

  /**
   * Sends QUIT after the commands already written (their replies still
   * arrive), waits for the server to close, then resolves. Later calls reject
   * with code ERR_TARDE_CLOSED.
   */
  close() {
    if (this._closePromise) return this._closePromise;
    const wasClosed = this._closedError !== null;
    this._markClosed(connectionError('ERR_TARDE_CLOSED', 'the client was closed'));
    this._closePromise = (async () => {
      if (!wasClosed && !this._socket.destroyed) {
        try {
          await this._send(['QUIT'], undefined, p.expectWord('BYE'), this.timeoutMs, true);
        } catch {
          // the connection went away first: nothing left to close politely
        }
      }
      if (!this._socket.destroyed) {
        this._socket.end();
        const t = setTimeout(() => this._socket.destroy(), this.timeoutMs);
        t.unref();
        await this._socketClosed;
        clearTimeout(t);
      } else {
        await this._socketClosed;
      }
    })();
    return this._closePromise;
  }

  /** Closes at once; pending commands reject with code ERR_TARDE_CLOSED. */
  destroy() {
    this._fail(connectionError('ERR_TARDE_CLOSED', 'the client was destroyed'));
  }

  // ---- commands ----

  /** ENQUEUE: creates a transaction (EXISTS when the txId is known). */
  async enqueue(queue, txId, payload, options) {
    p.checkQueue(queue);
    p.checkTxId(txId);
    const body = p.toPayload(payload);
    const tokens = ['ENQUEUE', queue, txId, ...p.enqueueOptionTokens(options)];
    return this._send(tokens, body, p.decodeSummary, this.timeoutMs);
  }

  /**
   * RESERVE: the next ready request, or null (EMPTY). `wait` may hold the
   * reply back. `queue` may be an array of up to 16 distinct queues: the
   * request comes from whichever has one, the server rotating which it tries
   * first on each call of this connection (the reply does not name the queue).
   */
  async reserve(queue, options) {
    const o = options == null ? {} : options;
    const tokens = ['RESERVE', p.queueList(queue)];
    let waitMs = 0;
    if (o.wait !== undefined && o.wait !== null) {
      const w = p.formatDuration(o.wait, 'wait');
      waitMs = p.parseDuration(w);
      if (waitMs > 0) tokens.push(`wait=${w}`);
    }
    return this._send(tokens, undefined, p.decodeRequest, waitMs + this.timeoutMs);
  }

  /** SENT: the request of `attempt` went out. */
  async sent(txId, attempt) {
    p.checkTxId(txId);
    const a = p.checkAttempt(attempt);
    return this._send(['SENT', txId, String(a)], undefined, p.decodeSummary, this.timeoutMs);
  }

  /** RELEASE: hands a reserved request back, ready again after `delay`. */
  async release(txId, attempt, options) {
    p.checkTxId(txId);
    const a = p.checkAttempt(attempt);
    const o = options == null ? {} : options;
    const tokens = ['RELEASE', txId, String(a)];
    if (o.delay !== undefined && o.delay !== null) tokens.push(`delay=${p.formatDuration(o.delay, 'delay')}`);
    if (o.reason !== undefined && o.reason !== null) tokens.push(`reason=${p.checkReason(o.reason)}`);
    return this._send(tokens, undefined, p.decodeSummary, this.timeoutMs);
  }

  /**
   * RESPOND: what the external service answered. `outcome` is SUCCESS,
   * CANCELLED, TRANSIENT or REJECTED, or an Answer.
   */
  async respond(txId, attempt, outcome, options) {
    p.checkTxId(txId);
    const a = p.checkAttempt(attempt);
    let o = options == null ? {} : options;
    let word = outcome;
    if (outcome instanceof Answer) {
      word = outcome.outcome;
      o = { reason: outcome.reason, retryAfter: outcome.retryAfter, ...o };
    }
    if (typeof word !== 'string' || !p.OUTCOMES.includes(word)) {
      throw new RangeError(`outcome must be one of ${p.OUTCOMES.join(', ')} (or an Answer), got ${p.describe(word)}`);
    }
    const tokens = ['RESPOND', txId, String(a), word];
    if (o.reason !== undefined && o.reason !== null) tokens.push(`reason=${p.checkReason(o.reason)}`);
    if (o.retryAfter !== undefined && o.retryAfter !== null) tokens.push(`retry_after=${p.formatDuration(o.retryAfter, 'retryAfter')}`);
    return this._send(tokens, undefined, p.decodeSummary, this.timeoutMs);
  }

  /** RESOLVE: settles a transaction by other means (SUCCEEDED or FAILED). */
  async resolve(txId, outcome, options) {
    p.checkTxId(txId);
    if (typeof outcome !== 'string' || !p.RESOLUTIONS.includes(outcome)) {
      throw new RangeError(`outcome must be SUCCEEDED or FAILED, got ${p.describe(outcome)}`);
    }
    const o = options == null ? {} : options;
    const tokens = ['RESOLVE', txId, outcome];
    if (o.reason !== undefined && o.reason !== null) tokens.push(`reason=${p.checkReason(o.reason)}`);
    return this._send(tokens, undefined, p.decodeSummary, this.timeoutMs);
  }

  /**
   * GET: the transaction, or null when tarde does not know it (NOT_FOUND).
   * With `{ payload: true }` its `payload` (a Buffer) is read too.
   */
  async get(txId, options) {
    p.checkTxId(txId);
    const o = options == null ? {} : options;
    const tokens = o.payload ? ['GET', txId, 'payload=1'] : ['GET', txId];
    return this._send(tokens, undefined, p.decodeTx, this.timeoutMs);
  }

  /** TOUCH: extends the lease this connection holds (status OK), else STALE. */
  async touch(txId, attempt) {
    p.checkTxId(txId);
    const a = p.checkAttempt(attempt);
    return this._send(['TOUCH', txId, String(a)], undefined, p.decodeSummary, this.timeoutMs);
  }

  /** PAUSE: the queue hands nothing out until RESUME. Idempotent; resolves 'PAUSED'. */
  async pause(queue) {
    p.checkQueue(queue);
    return this._send(['PAUSE', queue], undefined, p.expectQueueWord('PAUSED', queue), this.timeoutMs);
  }

  /** RESUME: the queue hands out requests again. Idempotent; resolves 'RESUMED'. */
  async resume(queue) {
    p.checkQueue(queue);
    return this._send(['RESUME', queue], undefined, p.expectQueueWord('RESUMED', queue), this.timeoutMs);
  }

  /** REDRIVE_ALL: redrives the matching dead letters ({ prefix, lastError, limit }); resolves how many. */
  async redriveAll(queue, options) {
    p.checkQueue(queue);
    const tokens = ['REDRIVE_ALL', queue, ...p.bulkTokens(options)];
    return this._send(tokens, undefined, p.decodeCount('REDRIVEN'), this.timeoutMs);
  }

  /**
   * RESOLVE_ALL: ends the matching dead letters' transactions as `outcome`
   * (SUCCEEDED or FAILED; { prefix, lastError, reason, limit }); resolves how many.
   */
  async resolveAll(queue, outcome, options) {
    p.checkQueue(queue);
    if (typeof outcome !== 'string' || !p.RESOLUTIONS.includes(outcome)) {
      throw new RangeError(`outcome must be SUCCEEDED or FAILED, got ${p.describe(outcome)}`);
    }
    const o = options == null ? {} : options;
    const tokens = ['RESOLVE_ALL', queue, outcome, ...p.bulkTokens(o)];
    if (o.reason !== undefined && o.reason !== null) tokens.push(`reason=${p.checkReason(o.reason)}`);
    return this._send(tokens, undefined, p.decodeCount('RESOLVED'), this.timeoutMs);
  }

  /** HISTORY: the kept events, oldest first, or null when the transaction is unknown. */
  async history(txId, options) {
    p.checkTxId(txId);
    const o = options == null ? {} : options;
    const tokens = ['HISTORY', txId];
    if (o.limit !== undefined && o.limit !== null) tokens.push(`limit=${p.checkWhole(o.limit, 'limit', 1, 100000)}`);
    return this._send(tokens, undefined, p.decodeEvents, this.timeoutMs);
  }

  /** DEADLETTERS: the queue's dead letters in txId order. */
  async deadletters(queue, options) {
    p.checkQueue(queue);
    const o = options == null ? {} : options;
    const tokens = ['DEADLETTERS', queue];
    if (o.limit !== undefined && o.limit !== null) tokens.push(`limit=${p.checkWhole(o.limit, 'limit', 1, 100000)}`);
    if (o.payload) tokens.push('payload=1');
    return this._send(tokens, undefined, p.decodeLetters, this.timeoutMs);
  }

  /**
   * LIST: one page of the queue's transactions in `state` (ready, leased,
   * in_flight, scheduled, succeeded, failed, dead): { items, next }. Pass
   * `next` back as `after` for the following page; it is null on the last.
   */
  async list(queue, state, options) {
    const tokens = p.listTokens(queue, state, options);
    return this._send(tokens, undefined, p.decodeListPage, this.timeoutMs);
  }

  /** REDRIVE: makes a dead letter's request ready again (status NOT_FOUND when there is no such letter). */
  async redrive(queue, txId) {
    p.checkQueue(queue);
    p.checkTxId(txId);
    return this._send(['REDRIVE', queue, txId], undefined, p.decodeSummary, this.timeoutMs);
  }

  /** CONFIG: sets the given settings (none: only reads) and returns all of the queue's settings. */
  async config(queue, settings) {
    p.checkQueue(queue);
    const tokens = ['CONFIG', queue, ...p.configTokens(settings)];
    return this._send(tokens, undefined, p.decodeConfig, this.timeoutMs);
  }

  /** STATS: counter name -> number. */
  async stats() {
    return this._send(['STATS'], undefined, p.decodeStats, this.timeoutMs);
  }

  /**
   * BACKUP: a verified backup into the server's --backup-dir; resolves
   * { id, bytes, files, tookMs } once it is made. It takes as long as copying
   * what changed since the last backup: `options.timeoutMs` (default one
   * hour) replaces the client's timeout for this reply. Rejects with
   * TardeError NOT_CONFIGURED (no --backup-dir), BUSY or BACKUP_FAILED.
   */
  async backup(options = {}) {
    const timeoutMs = checkTimeout(options.timeoutMs, 'timeoutMs') ?? 3600000;
    return this._send(['BACKUP'], undefined, p.decodeBackup, timeoutMs);
  }

  /** PING: resolves 'PONG'. */
  async ping() {
    return this._send(['PING'], undefined, p.expectWord('PONG'), this.timeoutMs);
  }

  /** AUTH: rejects with TardeError UNAUTHORIZED on a wrong token. Client.connect sends it for you. */
  async auth(token) {
    p.checkString('token', token);
    if (!p.WIRE_TOKEN_RE.test(token)) throw new RangeError('token must be printable ASCII without spaces or line breaks');
    return this._send(['AUTH', token], undefined, p.expectWord('OK'), this.timeoutMs);
  }

  /**
   * Any command, for what this client does not wrap: `verb` in upper case,
   * `args` tokens without spaces or line breaks, an optional payload (its
   * length is appended). Resolves the raw reply { line, tokens, payload?, lines? };
   * ERR replies reject with TardeError.
   */
  async command(verb, args, payload) {
    p.checkString('verb', verb);
    if (!/^[A-Z_]{1,32}$/.test(verb)) throw new RangeError(`verb must be upper-case letters, got ${p.describe(verb)}`);
    const list = args == null ? [] : args;
    if (!Array.isArray(list)) throw new TypeError('args must be an array of strings');
    for (const a of list) {
      p.checkString('argument', a);
      if (!p.WIRE_TOKEN_RE.test(a) || a.length > 4096) throw new RangeError(`argument ${p.describe(a)} must be printable ASCII without spaces or line breaks`);
    }
    if (verb === 'QUIT') throw new RangeError('use close() to QUIT');
    const body = payload === undefined ? undefined : p.toPayload(payload);
    return this._send([verb, ...list], body, (frame) => frame, this.timeoutMs);
  }
}

Client._secret = Symbol('Client');

module.exports = { Client, normalizeConnectOptions, DEFAULT_TIMEOUT_MS };
