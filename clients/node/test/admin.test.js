'use strict';

// Queue administration against a real tarde server: PAUSE/RESUME, TOUCH,
// RESERVE over several queues, REDRIVE_ALL/RESOLVE_ALL, payload reads.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Client, TardeError } = require('..');
const { startServer } = require('../test-support/server');

let server;
let c;

test.before(async () => {
  server = await startServer();
  c = await Client.connect({ port: server.port, timeoutMs: 10000 });
});

test.after(async () => {
  if (c) c.destroy();
  if (server) await server.cleanup();
});

async function bury(queue, txId, reason) {
  await c.enqueue(queue, txId, `body-${txId}`);
  const r = await c.reserve(queue);
  assert.equal(r.txId, txId);
  assert.equal((await c.release(txId, 1, { reason })).status, 'BURIED');
}

test('PAUSE and RESUME: idempotent, shown in STATS and CONFIG', { timeout: 30000 }, async () => {
  await c.enqueue('pq', 'P-1', 'x');
  assert.equal(await c.pause('pq'), 'PAUSED');
  assert.equal(await c.pause('pq'), 'PAUSED');
  assert.equal(await c.reserve('pq'), null);
  assert.equal((await c.stats())['paused.pq'], 1);
  assert.equal((await c.config('pq')).paused, 1);
  assert.equal(await c.resume('pq'), 'RESUMED');
  assert.equal(await c.resume('pq'), 'RESUMED');
  assert.equal((await c.reserve('pq')).txId, 'P-1');
  await assert.rejects(c.pause('bad/q'), RangeError);
});

test('TOUCH: OK for the holder, STALE for others, NOT_FOUND', { timeout: 30000 }, async () => {
  await c.enqueue('tq', 'T-1', 'x');
  assert.equal((await c.touch('T-1', 1)).status, 'STALE');
  await c.reserve('tq');
  assert.deepEqual(await c.touch('T-1', 1), { status: 'OK', txId: 'T-1', state: 'SENDING', attempt: 0, nextAttempt: 1, nextFireAt: 0 });
  const other = await Client.connect({ port: server.port });
  try {
    assert.equal((await other.touch('T-1', 1)).status, 'STALE');
  } finally {
    await other.close();
  }
  assert.equal((await c.touch('NOPE', 1)).status, 'NOT_FOUND');
  await assert.rejects(c.touch('T-1', 0), RangeError);
});

test('RESERVE over several queues alternates and skips paused ones', { timeout: 30000 }, async () => {
  for (const tx of ['A-1', 'A-2', 'A-3']) await c.enqueue('ma', tx, 'x');
  await c.enqueue('mb', 'B-1', 'x');
  const d = await Client.connect({ port: server.port });
  try {
    const got = [];
    for (let i = 0; i < 4; i++) got.push((await d.reserve(['ma', 'mb'])).txId);
    assert.deepEqual(got, ['A-1', 'B-1', 'A-2', 'A-3']);
    assert.equal(await d.reserve(['ma', 'mb'], { wait: 50 }), null);
    await d.enqueue('ma', 'A-4', 'x');
    await d.pause('ma');
    assert.equal(await d.reserve(['ma', 'mb']), null);
    await d.resume('ma');
    assert.equal((await d.reserve(['mb', 'ma'])).txId, 'A-4');
  } finally {
    await d.close();
  }
  await assert.rejects(c.reserve([]), RangeError);
  await assert.rejects(c.reserve(['ma', 'ma']), RangeError);
  await assert.rejects(c.reserve(['ma', 'a,b']), RangeError);
  await assert.rejects(c.reserve(Array.from({ length: 17 }, (_, i) => `q${i}`)), RangeError);
});

test('REDRIVE_ALL and RESOLVE_ALL count what they changed', { timeout: 30000 }, async () => {
  await c.config('bq', { maxDeliveries: 1 });
  await bury('bq', 'R-A-1', 'timeout');
  await bury('bq', 'R-A-2', 'refused');
  await bury('bq', 'R-B-1', 'timeout');
  assert.equal(await c.redriveAll('bq', { prefix: 'R-A-', lastError: 'timeout' }), 1);
  assert.equal(await c.resolveAll('bq', 'FAILED', { prefix: 'R-A-', reason: 'GAVE_UP', limit: 10 }), 1);
  const tx = await c.get('R-A-2');
  assert.equal(tx.state, 'FAILED');
  assert.equal(tx.reason, 'GAVE_UP');
  assert.equal(await c.resolveAll('bq', 'SUCCEEDED'), 1);
  assert.equal(await c.redriveAll('bq'), 0);
  await assert.rejects(c.redriveAll('bq', { limit: 0 }), RangeError);
  await assert.rejects(c.resolveAll('bq', 'MAYBE'), RangeError);
  await assert.rejects(c.command('REDRIVE_ALL', ['bq', 'limit=10001']), (err) => err instanceof TardeError && err.code === 'BAD_ARGUMENT');
});

test('GET and DEADLETTERS with payload', { timeout: 30000 }, async () => {
  const body = Buffer.from([0, 13, 10, 65]);
  await c.config('gq', { maxDeliveries: 1 });
  await c.enqueue('gq', 'G-1', body);
  const tx = await c.get('G-1', { payload: true });
  assert.deepEqual(tx.payload, body);
  assert.equal(tx.failedDeliveries, 0);
  assert.equal((await c.get('G-1')).payload, undefined);
  assert.equal(await c.get('NOPE', { payload: true }), null);
  await c.reserve('gq');
  await c.release('G-1', 1);
  await bury('gq', 'G-2', 'x');
  // pipelined with other commands, the framing holds
  const [letters, pong, plain] = await Promise.all([c.deadletters('gq', { payload: true }), c.ping(), c.deadletters('gq')]);
  assert.deepEqual(letters.map((l) => [l.txId, l.payload.toString('latin1'), l.payloadBytes]), [
    ['G-1', body.toString('latin1'), 4],
    ['G-2', 'body-G-2', 8],
  ]);
  assert.equal(pong, 'PONG');
  assert.equal(plain[0].payload, undefined);
});
