'use strict';

// A server restart: the plain Client rejects and stays closed; the Dispatcher
// reconnects, and an answer that could not be delivered is delivered after.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, Dispatcher, Answer } = require('..');
const { startServer, waitFor } = require('../test-support/server');

let server;

test.before(async () => {
  server = await startServer();
});

test.after(async () => {
  if (server) await server.cleanup();
});

async function withClient(fn) {
  const c = await Client.connect({ port: server.port });
  try {
    return await fn(c);
  } finally {
    c.destroy();
  }
}

test('plain Client: a restart rejects pending commands and the client does not reconnect', { timeout: 30000 }, async () => {
  const c = await Client.connect({ port: server.port });
  let closeErr;
  c.on('close', (e) => {
    closeErr = e;
  });
  await c.enqueue('rq', 'RC-1', 'x');
  const rejected = (promise) => promise.then(() => assert.fail('expected a rejection'), (e) => e);
  const waiting = rejected(c.reserve('rq-empty', { wait: '20s' }));
  const behind = rejected(c.get('RC-1'));
  await server.restart('SIGKILL');
  const e1 = await waiting;
  assert.ok(['ECONNRESET', 'EPIPE'].includes(e1.code), `code ${e1.code}`);
  assert.ok(!(e1 instanceof require('..').TardeError));
  const e2 = await behind;
  assert.ok(['ECONNRESET', 'EPIPE'].includes(e2.code), `code ${e2.code}`);
  assert.equal(c.closed, true);
  assert.ok(closeErr instanceof Error);
  // The server is back, the client stays down.
  const e3 = await rejected(c.ping());
  assert.ok(['ECONNRESET', 'EPIPE'].includes(e3.code), `code ${e3.code}`);
  await withClient(async (o) => {
    assert.equal((await o.get('RC-1')).state, 'SENDING', 'the acknowledged ENQUEUE survived kill -9');
    assert.equal((await o.stats()).connections, 1, 'nobody reconnected');
  });
});

test('Dispatcher: workers reconnect after a restart; an answer owed is delivered after reconnecting', { timeout: 30000 }, async () => {
  const q = 'dq';
  let release;
  const gate = new Promise((r) => {
    release = r;
  });
  const handled = [];
  const d = new Dispatcher(
    q,
    async (req) => {
      handled.push(req.txId);
      if (req.txId === 'DR-held') await gate;
      return Answer.success();
    },
    { port: server.port, concurrency: 2, reserveWaitMs: 300, reconnectBaseMs: 50, reconnectMaxMs: 400, logger: null },
  );
  const disconnects = [];
  d.on('disconnect', (err) => disconnects.push(err));
  d.start();
  try {
    await withClient(async (o) => {
      await o.enqueue(q, 'DR-1', 'x');
      await o.enqueue(q, 'DR-held', 'x');
    });
    await waitFor(() => handled.includes('DR-held') && handled.includes('DR-1'), { what: 'both handlers to run' });
    await withClient((o) => waitFor(async () => (await o.get('DR-1')).state === 'SUCCEEDED', { what: 'DR-1' }));

    // DR-held is IN_FLIGHT, its handler still running, when the server dies.
    await server.restart('SIGKILL');
    release();
    await withClient(async (o) => {
      await o.enqueue(q, 'DR-2', 'x');
      await waitFor(async () => (await o.get('DR-2')).state === 'SUCCEEDED', { what: 'DR-2 after the restart' });
      await waitFor(async () => (await o.get('DR-held')).state === 'SUCCEEDED', { what: 'the owed answer' });
      assert.equal((await o.get('DR-1')).state, 'SUCCEEDED');
    });
    // both workers come back (one may still be in its backoff when the work is done)
    await waitFor(() => d.stats.reconnects === 2, { what: `both workers to reconnect (${d.stats.reconnects})` });
    assert.ok(disconnects.length >= 2);
    assert.ok(disconnects.every((e) => typeof e.code === 'string'), 'network errors carry a code');
    assert.deepEqual(handled.filter((t) => t === 'DR-held'), ['DR-held'], 'the held request ran once');
  } finally {
    await d.close();
  }
});

test('Dispatcher: started while the server is down, it connects once the server is up', { timeout: 30000 }, async () => {
  await server.stop('SIGKILL');
  const d = new Dispatcher('late', async () => Answer.success(), {
    port: server.port,
    concurrency: 1,
    reserveWaitMs: 300,
    reconnectBaseMs: 50,
    reconnectMaxMs: 300,
    logger: null,
  });
  const refused = [];
  d.on('disconnect', (err) => refused.push(err.code));
  d.start();
  try {
    await waitFor(() => refused.length >= 2, { what: 'refused connection attempts' });
    assert.equal(refused[0], 'ECONNREFUSED');
    await server.start();
    await withClient(async (o) => {
      await o.enqueue('late', 'LATE-1', 'x');
      await waitFor(async () => (await o.get('LATE-1')).state === 'SUCCEEDED', { what: 'LATE-1' });
    });
  } finally {
    await d.close();
  }
});
