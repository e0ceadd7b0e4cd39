'use strict';

// The Dispatcher end to end against a real server: retries fire and are
// answered until SUCCESS, thrown errors, concurrency, graceful close.

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { Client, Dispatcher, Answer } = require('..');
const { startServer, waitFor, waitForCommands } = require('../test-support/server');

let server;
let c;

test.before(async () => {
  server = await startServer();
  c = await Client.connect({ port: server.port });
});

test.after(async () => {
  if (c) c.destroy();
  if (server) await server.cleanup();
});

const TERMINAL = new Set(['SUCCEEDED', 'FAILED']);

async function allTerminal(ids, timeoutMs = 20000) {
  return waitFor(async () => {
    const txs = await Promise.all(ids.map((id) => c.get(id)));
    return txs.every((tx) => tx && TERMINAL.has(tx.state)) ? txs : null;
  }, { timeoutMs, intervalMs: 50, what: 'every transaction to end' });
}

class Flaky extends Error {}

test('retries fire (base=50ms, jitter=0) and are answered until SUCCESS', { timeout: 30000 }, async () => {
  const q = 'e2e';
  await c.config(q, { transientBase: '50ms', transientCap: '200ms', jitter: 0 });
  const ids = [];
  for (let i = 0; i < 20; i++) ids.push(`E2E-${i}`);
  ids.push('E2E-REJ', 'E2E-EXHAUST');
  await Promise.all(ids.map((id) => c.enqueue(q, id, `{"n":"${id}"}`, { base: 50, jitter: 0, maxAttempts: 4 })));

  const calls = new Map(); // txId -> [attempt, ...]
  const seenStates = [];
  const d = new Dispatcher(
    q,
    async (req, signal) => {
      assert.ok(signal instanceof AbortSignal);
      assert.equal(req.key, `${req.txId}#${req.attempt}`);
      assert.equal(req.payload.toString(), `{"n":"${req.txId}"}`);
      const tx = await c.get(req.txId);
      seenStates.push(tx.state === 'IN_FLIGHT' && tx.attempt === req.attempt);
      const list = calls.get(req.txId) || [];
      list.push(req.attempt);
      calls.set(req.txId, list);
      if (req.txId === 'E2E-REJ') return Answer.rejected({ reason: 'CONFLICT' });
      if (req.txId === 'E2E-EXHAUST') return Answer.cancelled({ reason: 'NOT_NOW' });
      if (list.length === 1) return Answer.cancelled(); // attempt 1: not now
      if (list.length === 2) throw new Flaky('service hiccup'); // attempt 2: TRANSIENT
      return Answer.success(); // attempt 2 re-sent with the same key
    },
    { port: server.port, concurrency: 4, reserveWaitMs: 200, logger: null },
  ).start();
  try {
    const txs = await allTerminal(ids);
    const byId = Object.fromEntries(txs.map((tx) => [tx.txId, tx]));
    for (let i = 0; i < 20; i++) {
      const tx = byId[`E2E-${i}`];
      assert.equal(tx.state, 'SUCCEEDED');
      assert.equal(tx.attempt, 2);
      assert.deepEqual(calls.get(`E2E-${i}`), [1, 2, 2]);
    }
    assert.equal(byId['E2E-REJ'].state, 'FAILED');
    assert.equal(byId['E2E-REJ'].reason, 'CONFLICT');
    assert.equal(byId['E2E-EXHAUST'].state, 'FAILED');
    assert.equal(byId['E2E-EXHAUST'].reason, 'EXHAUSTED');
    assert.deepEqual(calls.get('E2E-EXHAUST'), [1, 2, 3, 4]);
    assert.ok(seenStates.every(Boolean), 'SENT went out before every handler call');

    const events = await c.history('E2E-0');
    const transient = events.find((e) => e.cause === 'RESPOND' && e.reason === 'Flaky');
    assert.ok(transient, 'the thrown error\'s class is the TRANSIENT reason');
    assert.equal(transient.nextAttempt, 2);

    assert.equal(d.stats.success, 20);
    assert.equal(d.stats.cancelled, 20 + 4);
    assert.equal(d.stats.transient, 20);
    assert.equal(d.stats.rejected, 1);
    assert.equal(d.stats.handlerErrors, 20);
    assert.equal(d.stats.handled, 65);
  } finally {
    await d.close();
  }
});

test('concurrency bounds the handlers running at once', { timeout: 30000 }, async () => {
  const q = 'conc';
  const ids = Array.from({ length: 24 }, (_, i) => `CONC-${i}`);
  await Promise.all(ids.map((id) => c.enqueue(q, id, 'x')));
  let running = 0;
  let max = 0;
  const d = new Dispatcher(
    q,
    async () => {
      running++;
      max = Math.max(max, running);
      await new Promise((r) => setTimeout(r, 40));
      running--;
      return Answer.success();
    },
    { port: server.port, concurrency: 3, reserveWaitMs: 200, logger: null },
  ).start();
  try {
    await allTerminal(ids);
    assert.equal(max, 3);
  } finally {
    await d.close();
  }
});

test('a handler that returns no Answer is answered TRANSIENT INVALID_ANSWER', { timeout: 30000 }, async () => {
  const q = 'inv';
  await c.config(q, { transientBase: 50 });
  await c.enqueue(q, 'INV-1', 'x', { base: 50, jitter: 0 });
  let n = 0;
  const errors = [];
  const d = new Dispatcher(q, async () => (++n === 1 ? { outcome: 'SUCCESS' } : Answer.success()), {
    port: server.port,
    concurrency: 1,
    reserveWaitMs: 200,
    logger: null,
  });
  d.on('handlerError', (err) => errors.push(err));
  d.start();
  try {
    await allTerminal(['INV-1']);
    const events = await c.history('INV-1');
    assert.ok(events.some((e) => e.reason === 'INVALID_ANSWER'));
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof TypeError);
  } finally {
    await d.close();
  }
});

test('close(): handlers get shutdownTimeoutMs, then their signal aborts; the answer is TRANSIENT', { timeout: 30000 }, async () => {
  const q = 'shut';
  await c.enqueue(q, 'SH-abort', 'x');
  await c.enqueue(q, 'SH-deaf', 'x');
  const started = new Set();
  const d = new Dispatcher(
    q,
    (req, signal) => {
      started.add(req.txId);
      if (req.txId === 'SH-deaf') return new Promise(() => {}); // ignores its signal
      return new Promise((resolve, reject) => {
        signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      });
    },
    { port: server.port, concurrency: 2, reserveWaitMs: 200, shutdownTimeoutMs: 300, abortGraceMs: 200, logger: null },
  ).start();
  await waitFor(() => started.size === 2, { what: 'both handlers to start' });
  assert.equal(d.running, 2);
  const t0 = Date.now();
  await d.close();
  const took = Date.now() - t0;
  assert.ok(took >= 280, `close waited for the handlers (${took} ms)`);
  assert.ok(took < 5000, `close did not hang (${took} ms)`);
  const aborted = await c.get('SH-abort');
  assert.equal(aborted.state, 'SCHEDULED');
  assert.equal(aborted.transients, 1);
  assert.equal((await c.history('SH-abort')).at(-1).reason, 'AbortError');
  const deaf = await c.get('SH-deaf');
  assert.equal(deaf.state, 'SCHEDULED');
  assert.equal((await c.history('SH-deaf')).at(-1).reason, 'SHUTDOWN');
  assert.equal(d.running, 0);
  const stats = await c.stats();
  await waitFor(async () => (await c.stats()).connections === 1, { what: 'the dispatcher connections to close' }).catch((e) => {
    throw new Error(`${e.message}; stats ${JSON.stringify(stats)}`);
  });
});

test('close(): a request reserved during close is released, not handled', { timeout: 30000 }, async () => {
  const q = 'held';
  let calls = 0;
  const base = (await c.stats()).commands;
  const d = new Dispatcher(q, async () => {
    calls++;
    return Answer.success();
  }, { port: server.port, concurrency: 1, reserveWaitMs: 3000, logger: null }).start();
  // the worker's PING (at connect) and its RESERVE, now waiting on the server
  await waitForCommands(c, base, 2, 'the worker to wait in RESERVE');
  const closing = d.close();
  await c.enqueue(q, 'HELD-1', 'x');
  await closing;
  assert.equal(calls, 0, 'the handler never ran');
  assert.equal(d.stats.released, 1);
  const tx = await c.get('HELD-1');
  assert.equal(tx.state, 'SENDING');
  assert.equal(tx.failedDeliveries, 1);
  const last = (await c.history('HELD-1')).at(-1);
  assert.equal(last.cause, 'RELEASE');
  assert.equal(last.reason, 'SHUTDOWN');
  // and it is ready again for the next dispatcher
  const r = await c.reserve(q);
  assert.equal(r.txId, 'HELD-1');
  assert.equal(r.handouts, 2);
  await c.respond(r.txId, r.attempt, 'SUCCESS');
});

test('handleSignals: SIGTERM finishes the running handler, answers, and lets the process exit 0', { timeout: 30000 }, async () => {
  const q = 'sig';
  await c.enqueue(q, 'SIG-1', 'x');
  const script = `
    const { Dispatcher, Answer } = require(${JSON.stringify(path.resolve(__dirname, '..'))});
    new Dispatcher(${JSON.stringify(q)}, async () => {
      process.stdout.write('handling\\n');
      await new Promise((r) => setTimeout(r, 300));
      return Answer.success();
    }, { port: ${server.port}, concurrency: 2, reserveWaitMs: 200, handleSignals: true, logger: null }).start();
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  try {
    await waitFor(() => out.includes('handling'), { what: 'the handler to start' });
    child.kill('SIGTERM');
    let timer;
    const hung = new Promise((res) => {
      timer = setTimeout(() => res('hung'), 10000);
    });
    const r = await Promise.race([exited, hung]);
    clearTimeout(timer);
    assert.deepEqual(r, { code: 0, signal: null });
    assert.equal((await c.get('SIG-1')).state, 'SUCCEEDED');
  } finally {
    child.kill('SIGKILL');
  }
});
