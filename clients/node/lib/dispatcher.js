'use strict';

const { EventEmitter } = require('node:events');
const { Client, normalizeConnectOptions } = require('./client');
const { Answer, reasonFromError } = require('./answer');
const { TardeError } = require('./errors');
const p = require('./protocol');

function positive(v, name, dflt, allowZero = false) {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || (!allowZero && v === 0)) {
    throw new RangeError(`${name} must be a ${allowZero ? 'non-negative' : 'positive'} number, got ${p.describe(v)}`);
  }
  return v;
}

/**
 * Runs `handler(request, signal)` for every request of `queue`, with
 * `concurrency` workers, each on its own connection:
 *
 *   RESERVE queue wait=reserveWaitMs  ->  SENT  ->  handler  ->  RESPOND
 *
 * SENT goes out immediately before the handler runs; the handler's Answer
 * becomes the RESPOND; a thrown error becomes TRANSIENT with the error's class
 * name as reason. A lost connection is re-established with capped, jittered
 * exponential backoff.
 *
 * Nothing runs until start(). Events: 'connect' (workerId),
 * 'disconnect' (err, workerId), 'handlerError' (err, request),
 * 'respondError' (err, request), 'close' (once close() is done). No 'error'
 * event is ever emitted.
 */
class Dispatcher extends EventEmitter {
  constructor(queue, handler, options) {
    super();
    p.checkQueue(queue);
    if (typeof handler !== 'function') throw new TypeError('handler must be a function (request, signal) => Promise<Answer>');
    const o = options == null ? {} : options;
    this.queue = queue;
    this._handler = handler;
    this._connect = normalizeConnectOptions(o);
    this.concurrency = positive(o.concurrency, 'concurrency', 8);
    if (!Number.isInteger(this.concurrency) || this.concurrency > 10000) throw new RangeError('concurrency must be a whole number from 1 to 10000');
    this.shutdownTimeoutMs = positive(o.shutdownTimeoutMs, 'shutdownTimeoutMs', 10000, true);
    this.abortGraceMs = positive(o.abortGraceMs, 'abortGraceMs', 1000, true);
    this.reserveWaitMs = positive(o.reserveWaitMs, 'reserveWaitMs', 1000);
    if (!Number.isInteger(this.reserveWaitMs)) throw new RangeError('reserveWaitMs must be a whole number');
    this.reconnectBaseMs = positive(o.reconnectBaseMs, 'reconnectBaseMs', 100);
    this.reconnectMaxMs = positive(o.reconnectMaxMs, 'reconnectMaxMs', 5000);
    this.handleSignals = Boolean(o.handleSignals);
    this._logger = o.logger === undefined ? console : o.logger;
    this.stats = {
      reserved: 0, // requests handed to this dispatcher
      handled: 0, // handler runs that ended in a RESPOND sent
      success: 0,
      cancelled: 0,
      transient: 0,
      rejected: 0,
      handlerErrors: 0, // handlers that threw (answered TRANSIENT)
      released: 0, // requests given back with RELEASE (during close)
      stale: 0, // SENT or RESPOND answered something other than OK
      reconnects: 0,
    };
    this._started = false;
    this._closing = false;
    this._forced = false;
    this._aborting = false;
    this._closePromise = null;
    this._workers = [];
    this._clients = new Set();
    this._running = new Set();
    this._sleepers = new Set();
    this._shutdownTimer = null;
    this._signalHandler = null;
  }

  /** Starts the workers (once); returns this. */
  start() {
    if (this._closing) throw new Error('this Dispatcher is closed');
    if (this._started) return this;
    this._started = true;
    for (let i = 0; i < this.concurrency; i++) this._workers.push(this._work(i));
    if (this.handleSignals) {
      let count = 0;
      this._signalHandler = (signal) => {
        count++;
        if (count === 1) {
          this._log(`tarde dispatcher: ${signal}: closing (again to stop at once)`);
          this.close().catch(() => {});
        } else {
          this._force();
        }
      };
      process.on('SIGTERM', this._signalHandler);
      process.on('SIGINT', this._signalHandler);
    }
    return this;
  }

  /** Handlers running now. */
  get running() {
    return this._running.size;
  }

  /**
   * Stops reserving; lets running handlers finish for shutdownTimeoutMs, then
   * aborts their signal (and answers TRANSIENT for a handler that still has
   * not returned abortGraceMs later); RELEASEs requests reserved but not yet
   * handed to a handler; closes the connections.
   */
  close() {
    if (this._closePromise) return this._closePromise;
    this._closing = true;
    this._closePromise = (async () => {
      for (const wake of this._sleepers) wake();
      this._shutdownTimer = setTimeout(() => {
        this._aborting = true;
        for (const run of this._running) run.abort();
      }, this.shutdownTimeoutMs);
      // Past every grace period, and a full command timeout more: give up on
      // whatever still waits (a server that does not answer).
      const hard = setTimeout(() => this._force(), this.shutdownTimeoutMs + this.abortGraceMs + this.reserveWaitMs + this._connect.timeoutMs);
      hard.unref();
      try {
        await Promise.all(this._workers);
      } finally {
        clearTimeout(this._shutdownTimer);
        clearTimeout(hard);
        if (this._signalHandler) {
          process.removeListener('SIGTERM', this._signalHandler);
          process.removeListener('SIGINT', this._signalHandler);
          this._signalHandler = null;
        }
      }
      this.emit('close');
    })();
    return this._closePromise;
  }

  _force() {
    this._closing = true;
    this._forced = true;
    for (const wake of this._sleepers) wake();
    for (const run of this._running) run.abandon();
    for (const c of this._clients) c.destroy();
  }

  _log(msg) {
    if (this._logger && typeof this._logger.warn === 'function') this._logger.warn(msg);
  }

  _sleep(ms) {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this._sleepers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this._sleepers.add(done);
    });
  }

  _backoffMs(failures) {
    const exp = Math.min(this.reconnectMaxMs, this.reconnectBaseMs * 2 ** Math.min(failures - 1, 30));
    return exp / 2 + Math.random() * (exp / 2);
  }

  async _connectWorker(w) {
    const client = await Client.connect(this._connect);
    this._clients.add(client);
    client.once('close', () => this._clients.delete(client));
    if (this._forced) client.destroy();
    w.client = client;
    if (w.failures > 0) {
      this.stats.reconnects++;
      this._log(`tarde dispatcher: worker ${w.id} reconnected to ${this._connect.host}:${this._connect.port}`);
    }
    w.failures = 0;
    this.emit('connect', w.id);
  }

  // The connection is gone or unusable: drop it and wait before the next try.
  async _lost(w, err) {
    if (w.client) {
      w.client.destroy();
      w.client = null;
    }
    w.failures++;
    if (w.failures === 1 || w.failures % 20 === 0) {
      this._log(`tarde dispatcher: worker ${w.id}: ${err && err.code ? err.code + ' ' : ''}${err && err.message}; reconnecting`);
    }
    this.emit('disconnect', err, w.id);
    if (!this._closing) await this._sleep(this._backoffMs(w.failures));
  }

  async _work(id) {
    const w = { id, client: null, failures: 0 };
    while (!this._closing) {
      if (!w.client) {
        try {
          await this._connectWorker(w);
        } catch (err) {
          await this._lost(w, err);
          continue;
        }
        if (this._closing) break;
      }
      let request;
      try {
        request = await w.client.reserve(this.queue, { wait: this.reserveWaitMs });
      } catch (err) {
        await this._lost(w, err);
        continue;
      }
      if (request === null) continue;
      this.stats.reserved++;
      if (this._closing) {
        await this._release(w, request, 'SHUTDOWN');
        break;
      }
      await this._handle(w, request);
    }
    if (w.client) {
      const c = w.client;
      w.client = null;
      await c.close().catch(() => c.destroy());
    }
  }

  async _release(w, request, reason) {
    try {
      const r = await w.client.release(request.txId, request.attempt, { reason });
      if (r.status === 'OK' || r.status === 'BURIED') this.stats.released++;
    } catch {
      // the connection is gone: tarde counts that as the failed delivery itself
    }
  }

  async _handle(w, request) {
    let sent;
    try {
      sent = await w.client.sent(request.txId, request.attempt);
    } catch (err) {
      if (err instanceof TardeError && !err.closesConnection && w.client) {
        await this._release(w, request, 'SENT_FAILED');
      } else {
        await this._lost(w, err);
      }
      return;
    }
    if (sent.status !== 'OK') {
      // Not ours to send any more (answered or settled elsewhere): skip the call.
      this.stats.stale++;
      return;
    }
    const answer = await this._runHandler(request);
    await this._respond(w, request, answer);
  }

  _runHandler(request) {
    const controller = new AbortController();
    let abandon;
    const abandoned = new Promise((resolve) => {
      abandon = () => resolve(Answer.transient({ reason: 'SHUTDOWN' }));
    });
    let graceTimer = null;
    const run = {
      abort: () => {
        if (controller.signal.aborted) return;
        controller.abort(new Error('the dispatcher is closing'));
        graceTimer = setTimeout(abandon, this.abortGraceMs);
      },
      abandon,
    };
    this._running.add(run);
    if (this._aborting) run.abort();
    if (this._forced) run.abandon();
    const handled = (async () => {
      try {
        const answer = await this._handler(request, controller.signal);
        if (answer instanceof Answer) return answer;
        const err = new TypeError(`the handler must return an Answer, got ${p.describe(answer)}`);
        this._handlerError(err, request);
        return Answer.transient({ reason: 'INVALID_ANSWER' });
      } catch (err) {
        this._handlerError(err, request);
        return Answer.transient({ reason: reasonFromError(err) });
      }
    })();
    return Promise.race([handled, abandoned]).finally(() => {
      clearTimeout(graceTimer);
      this._running.delete(run);
    });
  }

  _handlerError(err, request) {
    this.stats.handlerErrors++;
    if (this.listenerCount('handlerError') > 0) this.emit('handlerError', err, request);
  }

  async _respond(w, request, answer) {
    const options = { reason: answer.reason, retryAfter: answer.retryAfter };
    for (let tries = 0; ; tries++) {
      // An answer matters: keep trying through reconnects, except when closing
      // (a few tries) or forced. Unanswered, the transaction stays IN_FLIGHT
      // until the queue's response_timeout.
      if (this._forced || (this._closing && tries >= 3)) {
        this.emit('respondError', new Error('gave up delivering the answer'), request);
        return;
      }
      if (!w.client) {
        try {
          await this._connectWorker(w);
        } catch (err) {
          await this._lost(w, err);
          if (this._closing) await this._sleep(this._backoffMs(w.failures));
          continue;
        }
      }
      try {
        const r = await w.client.respond(request.txId, request.attempt, answer.outcome, options);
        this.stats.handled++;
        this.stats[answer.outcome.toLowerCase()]++;
        if (r.status !== 'OK') this.stats.stale++;
        return;
      } catch (err) {
        if (err instanceof TardeError && !err.closesConnection && err.code !== 'INTERNAL') {
          this.emit('respondError', err, request);
          this._log(`tarde dispatcher: RESPOND ${request.txId} ${request.attempt} refused: ${err.message}`);
          return;
        }
        if (err instanceof TardeError && err.code === 'INTERNAL') {
          await this._sleep(this._backoffMs(tries + 1));
          continue;
        }
        await this._lost(w, err);
        if (this._closing) await this._sleep(this._backoffMs(w.failures));
      }
    }
  }
}

module.exports = { Dispatcher };
