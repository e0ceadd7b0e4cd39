'use strict';

// Every command and reply shape against a real tarde server, the waiting
// RESERVE, and pipelining.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Client } = require('..');
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

const SUMMARY_KEYS = ['attempt', 'nextAttempt', 'nextFireAt', 'state', 'status', 'txId'];

function assertSummary(r, status, txId, state, attempt, nextAttempt) {
  assert.deepEqual(Object.keys(r).sort(), SUMMARY_KEYS);
  assert.equal(r.status, status);
  assert.equal(r.txId, txId);
  assert.equal(r.state, state);
  assert.equal(r.attempt, attempt);
  assert.equal(r.nextAttempt, nextAttempt);
  assert.equal(typeof r.nextFireAt, 'number');
}

test('LIST: pages with cursors, prefix, reason; items as GET shows them', { timeout: 30000 }, async () => {
  for (const id of ['LS-3', 'LS-1', 'LS-2']) await c.enqueue('lst', id, 'x', { delay: '1h' });
  await c.enqueue('lst', 'LF-1', 'x', { sent: true });
  await c.respond('LF-1', 1, 'REJECTED', { reason: 'CARD' });
  const ids = [];
  let after;
  let pages = 0;
  for (;;) {
    const page = await c.list('lst', 'scheduled', { limit: 2, after });
    pages += 1;
    for (const item of page.items) ids.push(item.txId);
    if (page.next === null) break;
    after = page.next;
  }
  assert.deepEqual(ids, ['LS-1', 'LS-2', 'LS-3']);
  assert.equal(pages, 2);
  const one = await c.list('lst', 'scheduled', { prefix: 'LS-2' });
  assert.equal(one.next, null);
  assert.deepEqual(Object.keys(one.items[0]).sort(), ['attempt', 'deliveries', 'nextAttempt', 'nextFireAt', 'reason', 'state', 'txId', 'updatedAt']);
  assert.equal(one.items[0].state, 'SCHEDULED');
  assert.equal(one.items[0].reason, null);
  assert.ok(one.items[0].nextFireAt > Date.now());
  const failed = await c.list('lst', 'failed', { reason: 'CARD' });
  assert.deepEqual(failed.items.map((i) => [i.txId, i.reason]), [['LF-1', 'CARD']]);
  assert.deepEqual(await c.list('lst', 'dead'), { items: [], next: null });
  await assert.rejects(c.list('lst', 'ready', { after: 'tLS-1' }), (err) => err.code === 'BAD_ARGUMENT');
  assert.equal(await c.ping(), 'PONG');
});

test('PING', { timeout: 30000 }, async () => {
  assert.equal(await c.ping(), 'PONG');
});

test('ENQUEUE: CREATED, EXISTS, sent=1, delay, options stored', { timeout: 30000 }, async () => {
  assertSummary(await c.enqueue('cmd', 'E-1', '{"amount":1250}'), 'CREATED', 'E-1', 'SENDING', 0, 1);
  const again = await c.enqueue('cmd', 'E-1', 'other', { maxAttempts: 9 });
  assertSummary(again, 'EXISTS', 'E-1', 'SENDING', 0, 1);
  assert.equal((await c.get('E-1')).payloadBytes, 15, 'EXISTS changes nothing');

  assertSummary(await c.enqueue('cmd', 'E-sent', '', { sent: true }), 'CREATED', 'E-sent', 'IN_FLIGHT', 1, 0);

  const before = Date.now();
  const d = await c.enqueue('cmd', 'E-delay', Buffer.alloc(0), { delay: '10s' });
  assertSummary(d, 'CREATED', 'E-delay', 'SCHEDULED', 0, 1);
  assert.ok(d.nextFireAt >= before + 10000 - 5 && d.nextFireAt <= Date.now() + 10000 + 5, `nextFireAt ${d.nextFireAt}`);

  await c.enqueue('cmd', 'E-opts', 'x', { maxAttempts: 7, base: 50, jitter: 0, deadline: '1h', factor: 1.5 });
  const tx = await c.get('E-opts');
  assert.equal(tx.maxAttempts, 7);
  assert.ok(tx.deadlineAt > tx.createdAt + 3600000 - 5 && tx.deadlineAt <= tx.createdAt + 3600000 + 5);
});

test('GET: every field in camelCase; null for NOT_FOUND', { timeout: 30000 }, async () => {
  await c.enqueue('cmd', 'G=1', 'hello');
  const tx = await c.get('G=1');
  assert.deepEqual(Object.keys(tx).sort(), [
    'attempt', 'createdAt', 'deadlineAt', 'failedDeliveries', 'maxAttempts', 'nextAttempt', 'nextFireAt',
    'payloadBytes', 'queue', 'reason', 'state', 'transients', 'txId', 'updatedAt',
  ]);
  assert.equal(tx.txId, 'G=1', 'an id with = survives');
  assert.equal(tx.queue, 'cmd');
  assert.equal(tx.state, 'SENDING');
  assert.equal(tx.attempt, 0);
  assert.equal(tx.nextAttempt, 1);
  assert.equal(tx.maxAttempts, 4);
  assert.equal(tx.reason, null);
  assert.equal(tx.payloadBytes, 5);
  assert.ok(Math.abs(tx.createdAt - Date.now()) < 60000);
  assert.equal(await c.get('NO-SUCH-TX'), null);
});

test('RESERVE: REQUEST with binary payload, EMPTY; SENT OK, STALE, NOT_FOUND', { timeout: 30000 }, async () => {
  const payload = Buffer.from([0, 1, 2, 13, 10, 255, 13, 10, 0x45, 0x4d, 0x50, 0x54, 0x59, 13, 10]);
  await c.config('rsv', {});
  await c.enqueue('rsv', 'R-1', payload);
  const req = await c.reserve('rsv');
  assert.deepEqual(Object.keys(req).sort(), ['attempt', 'handouts', 'key', 'payload', 'txId']);
  assert.equal(req.txId, 'R-1');
  assert.equal(req.attempt, 1);
  assert.equal(req.key, 'R-1#1');
  assert.equal(req.handouts, 1);
  assert.ok(Buffer.isBuffer(req.payload));
  assert.deepEqual(req.payload, payload);
  assert.equal(await c.reserve('rsv'), null);

  assertSummary(await c.sent('R-1', 1), 'OK', 'R-1', 'IN_FLIGHT', 1, 0);
  assertSummary(await c.sent('R-1', 1), 'STALE', 'R-1', 'IN_FLIGHT', 1, 0);
  const nf = await c.sent('NOPE', 1);
  assert.deepEqual(nf, { status: 'NOT_FOUND', txId: 'NOPE', state: null, attempt: null, nextAttempt: null, nextFireAt: null });

  // an empty payload and a UTF-8 string
  await c.enqueue('rsv', 'R-2', '');
  await c.enqueue('rsv', 'R-3', 'añb');
  assert.deepEqual((await c.reserve('rsv')).payload, Buffer.alloc(0));
  assert.equal((await c.reserve('rsv')).payload.toString('utf8'), 'añb');
});

test('RESERVE with wait: EMPTY after the wait; served when work arrives', { timeout: 30000 }, async () => {
  let started = Date.now();
  assert.equal(await c.reserve('waitq', { wait: 400 }), null);
  const waited = Date.now() - started;
  assert.ok(waited >= 350, `waited only ${waited} ms`);

  const other = await Client.connect({ port: server.port });
  try {
    started = Date.now();
    const pending = other.reserve('waitq', { wait: '10s' });
    setTimeout(() => c.enqueue('waitq', 'W-1', 'x').catch(() => {}), 150);
    const req = await pending;
    assert.equal(req.txId, 'W-1');
    assert.ok(Date.now() - started < 5000, 'handed out long before the wait ran out');
  } finally {
    other.destroy();
  }
});

test('RESPOND: SUCCESS, REJECTED, CANCELLED, TRANSIENT with retry_after, STALE, NOT_FOUND', { timeout: 30000 }, async () => {
  await c.enqueue('rsp', 'P-ok', 'x');
  await c.enqueue('rsp', 'P-rej', 'x');
  await c.enqueue('rsp', 'P-can', 'x', { base: '1h', jitter: 0 });
  await c.enqueue('rsp', 'P-tr', 'x');
  // RESPOND from SENDING implies SENT
  assertSummary(await c.respond('P-ok', 1, 'SUCCESS'), 'OK', 'P-ok', 'SUCCEEDED', 1, 0);
  assertSummary(await c.respond('P-ok', 1, 'SUCCESS'), 'STALE', 'P-ok', 'SUCCEEDED', 1, 0);

  assertSummary(await c.respond('P-rej', 1, 'REJECTED', { reason: 'CARD_DECLINED' }), 'OK', 'P-rej', 'FAILED', 1, 0);
  assert.equal((await c.get('P-rej')).reason, 'CARD_DECLINED');

  const before = Date.now();
  const can = await c.respond('P-can', 1, 'CANCELLED');
  assertSummary(can, 'OK', 'P-can', 'SCHEDULED', 1, 2);
  assert.ok(can.nextFireAt >= before + 3600000 - 5 && can.nextFireAt <= Date.now() + 3600000 + 5);

  const tr = await c.respond('P-tr', 1, 'TRANSIENT', { reason: 'HTTP_503', retryAfter: 250 });
  assertSummary(tr, 'OK', 'P-tr', 'SCHEDULED', 1, 1);
  assert.equal((await c.get('P-tr')).transients, 1);

  assert.equal((await c.respond('NOPE', 1, 'SUCCESS')).status, 'NOT_FOUND');
});

test('RELEASE: OK with delay, STALE from another connection, BURIED; DEADLETTERS; REDRIVE', { timeout: 30000 }, async () => {
  await c.config('rel', { maxDeliveries: 2 });
  await c.enqueue('rel', 'L-1', 'x');
  const req = await c.reserve('rel');
  const other = await Client.connect({ port: server.port });
  try {
    assertSummary(await other.release('L-1', 1), 'STALE', 'L-1', 'SENDING', 0, 1);
  } finally {
    await other.close();
  }
  assertSummary(await c.release(req.txId, req.attempt, { delay: 50, reason: 'SOCKET_RESET' }), 'OK', 'L-1', 'SENDING', 0, 1);
  const again = await c.reserve('rel', { wait: 5000 });
  assert.equal(again.txId, 'L-1');
  assert.equal(again.handouts, 2);
  assertSummary(await c.release('L-1', 1), 'BURIED', 'L-1', 'SENDING', 0, 1);

  const letters = await c.deadletters('rel');
  assert.equal(letters.length, 1);
  assert.deepEqual(Object.keys(letters[0]).sort(), ['attempt', 'buriedAt', 'failedDeliveries', 'key', 'lastError', 'payloadBytes', 'txId']);
  assert.equal(letters[0].txId, 'L-1');
  assert.equal(letters[0].attempt, 1);
  assert.equal(letters[0].key, 'L-1#1');
  assert.equal(letters[0].failedDeliveries, 2);
  assert.equal(letters[0].lastError, 'RELEASED');
  assert.ok(letters[0].buriedAt > 0);
  assert.deepEqual(await c.deadletters('rel', { limit: 1 }), letters);
  assert.deepEqual(await c.deadletters('empty-queue'), []);

  assertSummary(await c.redrive('rel', 'L-1'), 'OK', 'L-1', 'SENDING', 0, 1);
  assert.equal((await c.redrive('rel', 'L-1')).status, 'NOT_FOUND');
  assert.deepEqual(await c.deadletters('rel'), []);
  const back = await c.reserve('rel');
  assert.equal(back.txId, 'L-1');
  assert.equal(back.handouts, 1);
});

test('RESOLVE: OK from SCHEDULED, CONFLICT from IN_FLIGHT, STALE when terminal, NOT_FOUND', { timeout: 30000 }, async () => {
  await c.enqueue('res', 'S-1', 'x', { delay: '1h' });
  assertSummary(await c.resolve('S-1', 'SUCCEEDED', { reason: 'PAID_BY_HAND' }), 'OK', 'S-1', 'SUCCEEDED', 0, 0);
  assertSummary(await c.resolve('S-1', 'FAILED'), 'STALE', 'S-1', 'SUCCEEDED', 0, 0);
  await c.enqueue('res', 'S-2', 'x', { sent: true });
  assertSummary(await c.resolve('S-2', 'FAILED'), 'CONFLICT', 'S-2', 'IN_FLIGHT', 1, 0);
  await c.enqueue('res', 'S-3', 'x', { delay: '1h' });
  await c.resolve('S-3', 'FAILED');
  assert.equal((await c.get('S-3')).reason, 'RESOLVED');
  assert.equal((await c.resolve('NOPE', 'FAILED')).status, 'NOT_FOUND');
});

test('HISTORY: events oldest first, limit, null for NOT_FOUND', { timeout: 30000 }, async () => {
  await c.enqueue('his', 'H-1', 'x', { base: 50, jitter: 0 });
  await c.sent('H-1', 1);
  await c.respond('H-1', 1, 'CANCELLED', { reason: 'NOT_NOW' });
  const events = await c.history('H-1');
  assert.equal(events.length, 3);
  assert.deepEqual(Object.keys(events[0]).sort(), ['at', 'attempt', 'cause', 'dropped', 'due', 'from', 'late', 'nextAttempt', 'reason', 'seq', 'to']);
  assert.deepEqual(events.map((e) => [e.seq, e.dropped, e.due, e.late]), [[0, 0, null, null], [1, 0, null, null], [2, 0, null, null]]);
  assert.deepEqual(events.map((e) => [e.from, e.to, e.cause]), [
    [null, 'SENDING', 'ENQUEUE'],
    ['SENDING', 'IN_FLIGHT', 'SENT'],
    ['IN_FLIGHT', 'SCHEDULED', 'RESPOND'],
  ]);
  assert.equal(events[2].reason, 'NOT_NOW');
  assert.equal(events[2].attempt, 1);
  assert.equal(events[2].nextAttempt, 2);
  assert.ok(events[0].at <= events[1].at && events[1].at <= events[2].at);
  const last = await c.history('H-1', { limit: 1 });
  assert.deepEqual(last, [events[2]]);
  assert.equal(await c.history('NOPE'), null);
});

test('HISTORY: history_max keeps the first event and the newest, with the dropped marker', { timeout: 30000 }, async () => {
  await c.config('hisbound', { historyMax: 3 });
  await c.enqueue('hisbound', 'HB-1', 'x');
  for (let i = 0; i < 4; i++) {
    const req = await c.reserve('hisbound');
    assert.equal(req.txId, 'HB-1');
    await c.release('HB-1', 1);
  }
  // Events 0 (ENQUEUE) to 4 (the fourth RELEASE): the first and the newest two stay.
  const events = await c.history('HB-1');
  assert.deepEqual(events.map((e) => [e.seq, e.dropped, e.cause]), [[0, 0, 'ENQUEUE'], [3, 2, 'RELEASE'], [4, 0, 'RELEASE']]);
});

test('CONFIG: read, set (camelCase or snake_case names), durations in ms', { timeout: 30000 }, async () => {
  const defaults = await c.config('cfg');
  assert.deepEqual(defaults, {
    maxAttempts: 4, base: 7200000, factor: 2, cap: 86400000, jitter: 0.1, strictCap: 0,
    transientBase: 1000, transientFactor: 1.6, transientCap: 120000, maxTransient: 10,
    lease: 30000, maxDeliveries: 5, rate: 0, responseTimeout: 0, breaker: 1, retention: 604800000,
    historyMax: 1000, stuckAfter: 3600000, paused: 0,
  });
  const set = await c.config('cfg', { transientBase: '50ms', transient_cap: 200, base: '5s', jitter: 0, breaker: false, historyMax: 50, stuck_after: '2m' });
  assert.equal(set.historyMax, 50);
  assert.equal(set.stuckAfter, 120000);
  assert.equal(set.transientBase, 50);
  assert.equal(set.transientCap, 200);
  assert.equal(set.base, 5000);
  assert.equal(set.jitter, 0);
  assert.equal(set.breaker, 0);
  assert.deepEqual(await c.config('cfg'), set, 'persisted');
});

test('STATS: name -> number', { timeout: 30000 }, async () => {
  const s = await c.stats();
  for (const name of ['uptime_ms', 'connections', 'commands', 'transactions', 'sending', 'in_flight', 'scheduled', 'succeeded', 'failed', 'ready', 'leased', 'dead_letters']) {
    assert.equal(typeof s[name], 'number', name);
  }
  for (const v of Object.values(s)) assert.equal(typeof v, 'number');
  assert.ok(s.transactions >= 10);
  assert.ok(s.connections >= 1);
  assert.ok(Object.keys(s).some((k) => k.startsWith('breaker.')), 'per-queue names are kept as they are');
});

test('command(): raw access to any command', { timeout: 30000 }, async () => {
  const r = await c.command('PING');
  assert.deepEqual(r, { line: 'PONG', tokens: ['PONG'] });
  const s = await c.command('STATS');
  assert.equal(s.tokens[0], 'STATS');
  assert.equal(s.lines.length, s.count);
});

test('pipelining: hundreds of concurrent commands on one connection, replies matched', { timeout: 30000 }, async () => {
  const n = 400;
  const p = await Client.connect({ port: server.port });
  try {
    const enq = [];
    for (let i = 0; i < n; i++) enq.push(p.enqueue('pipe', `PIPE-${i}`, `payload-${i}`));
    const gets = [];
    for (let i = 0; i < n; i++) gets.push(p.get(`PIPE-${i}`));
    const created = await Promise.all(enq);
    created.forEach((r, i) => {
      assert.equal(r.status, 'CREATED');
      assert.equal(r.txId, `PIPE-${i}`);
    });
    const txs = await Promise.all(gets);
    txs.forEach((tx, i) => {
      assert.equal(tx.txId, `PIPE-${i}`);
      assert.equal(tx.payloadBytes, `payload-${i}`.length);
    });
    // Hundreds of REQUEST replies with payloads, interleaved with other replies.
    const work = [];
    for (let i = 0; i < n; i++) {
      work.push(p.reserve('pipe'));
      if (i % 10 === 0) work.push(p.stats());
      if (i % 7 === 0) work.push(p.history(`PIPE-${i}`));
    }
    const results = await Promise.all(work);
    const reqs = results.filter((r) => r && r.key);
    assert.equal(reqs.length, n);
    const seen = new Set();
    for (const r of reqs) {
      assert.equal(r.payload.toString(), `payload-${r.txId.slice(5)}`);
      seen.add(r.txId);
    }
    assert.equal(seen.size, n);
    const answers = await Promise.all(reqs.map((r, i) => p.respond(r.txId, r.attempt, i % 2 ? 'SUCCESS' : 'REJECTED')));
    answers.forEach((a, i) => {
      assert.equal(a.txId, reqs[i].txId);
      assert.equal(a.state, i % 2 ? 'SUCCEEDED' : 'FAILED');
    });
    assert.equal(p.pendingCount, 0);
  } finally {
    await p.close();
  }
});

test('a 512 KiB payload round-trips', { timeout: 30000 }, async () => {
  const big = Buffer.alloc(512 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
  await c.enqueue('big', 'BIG-1', big);
  const r = await c.reserve('big');
  assert.ok(r.payload.equals(big));
});

test('close(): replies already owed still arrive, later calls reject', { timeout: 30000 }, async () => {
  const p = await Client.connect({ port: server.port });
  const ping = p.ping();
  const closing = p.close();
  assert.equal(await ping, 'PONG');
  await closing;
  assert.equal(p.closed, true);
  await assert.rejects(p.ping(), { code: 'ERR_TARDE_CLOSED' });
});

test('BACKUP: id, bytes, files, tookMs; numbered 1, 2; NOT_CONFIGURED without --backup-dir', { timeout: 30000 }, async () => {
  const { tempDir } = require('../test-support/server');
  const fs = require('node:fs');
  const path = require('node:path');
  const { TardeError } = require('..');
  const dir = tempDir('tarde-node-backups-');
  const backed = await startServer({ label: 'backups', args: ['--backup-dir', path.join(dir, 'b')] });
  const b = await Client.connect({ port: backed.port, timeoutMs: 10000 });
  try {
    await b.enqueue('bq', 'B-1', 'x');
    const first = await b.backup();
    assert.deepEqual(Object.keys(first).sort(), ['bytes', 'files', 'id', 'tookMs']);
    assert.equal(first.id, 1);
    assert.ok(first.bytes > 0);
    assert.ok(first.files > 0);
    assert.equal((await b.backup({ timeoutMs: 60000 })).id, 2);
    assert.ok(fs.existsSync(path.join(dir, 'b', 'meta')));
    await assert.rejects(b.backup({ timeoutMs: -1 }), RangeError);
  } finally {
    b.destroy();
    await backed.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  // The shared server has no --backup-dir: a clear refusal, and the connection goes on.
  const err = await c.backup().then(() => assert.fail('expected NOT_CONFIGURED'), (e) => e);
  assert.ok(err instanceof TardeError);
  assert.equal(err.code, 'NOT_CONFIGURED');
  assert.equal(err.closesConnection, false);
  assert.match(err.serverMessage, /--backup-dir/);
  assert.equal(await c.ping(), 'PONG');
});
