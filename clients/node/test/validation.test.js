'use strict';

// Client-side argument checks, the exact bytes written, timeouts and the
// error-code table, against a fake server that records what it receives.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { Client, TardeError, ERROR_CODES } = require('..');
const { waitFor } = require('../test-support/server');

// A fake tarde: records every byte, answers by a script.
async function fakeServer(answer) {
  const state = { received: Buffer.alloc(0), sockets: new Set() };
  const server = net.createServer((sock) => {
    state.sockets.add(sock);
    sock.on('close', () => state.sockets.delete(sock));
    let buf = Buffer.alloc(0);
    let skip = 0;
    sock.on('data', (d) => {
      state.received = Buffer.concat([state.received, d]);
      buf = Buffer.concat([buf, d]);
      for (;;) {
        if (skip > 0) {
          const n = Math.min(skip, buf.length);
          buf = buf.subarray(n);
          skip -= n;
          if (skip > 0) break;
        }
        const i = buf.indexOf('\r\n');
        if (i < 0) break;
        const line = buf.subarray(0, i).toString('latin1');
        buf = buf.subarray(i + 2);
        const tok = line.split(' ');
        if (tok[0] === 'ENQUEUE') skip = Number(tok[tok.length - 1]) + 2;
        const reply = answer(tok, line);
        if (reply === null) continue; // never answer
        if (typeof reply === 'function') reply(sock);
        else sock.write(reply);
        if (tok[0] === 'QUIT') sock.end();
      }
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  state.port = server.address().port;
  state.close = () => {
    for (const s of state.sockets) s.destroy();
    return new Promise((r) => server.close(r));
  };
  return state;
}

function defaultAnswer(tok) {
  switch (tok[0]) {
    case 'PING':
      return 'PONG\r\n';
    case 'QUIT':
      return 'BYE\r\n';
    case 'ENQUEUE':
      return `CREATED ${tok[2]} SENDING 0 1 0\r\n`;
    case 'CONFIG':
      return `CONFIG ${tok[1]} base=50ms factor=1.5 jitter=0 lease=30s rate=2.5 future_thing=abc\r\n`;
    case 'RESERVE':
      return 'EMPTY\r\n';
    case 'HISTORY':
      return 'EVENTS 0\r\n';
    case 'INTERNALME':
      return 'ERR INTERNAL the store refused the write\r\n';
    default:
      return `OK ${tok[1] || '-'} SENDING 0 1 0\r\n`;
  }
}

test('invalid arguments reject with TypeError/RangeError and nothing is sent', async (t) => {
  const fake = await fakeServer(defaultAnswer);
  t.after(() => fake.close());
  const c = await Client.connect({ port: fake.port, timeoutMs: 2000 });
  t.after(() => c.destroy());
  const before = fake.received.toString('latin1');
  assert.equal(before, 'PING\r\n', 'connect sends one PING');

  const bad = [
    // txId: spaces, CR, LF, empty, too long, not ASCII, not a string
    [() => c.get('TX 1'), RangeError],
    [() => c.get('TX-1\r\nSTATS'), RangeError],
    [() => c.get('TX-1\n'), RangeError],
    [() => c.get('TX\r'), RangeError],
    [() => c.get('TX\t1'), RangeError],
    [() => c.get(''), RangeError],
    [() => c.get('x'.repeat(201)), RangeError],
    [() => c.get('TX-é'), RangeError],
    [() => c.get(42), TypeError],
    [() => c.get(undefined), TypeError],
    [() => c.enqueue('q', 'TX 1', 'x'), RangeError],
    [() => c.sent('TX\r\n1', 1), RangeError],
    [() => c.history('a b'), RangeError],
    // queue
    [() => c.enqueue('my queue', 'TX-1', 'x'), RangeError],
    [() => c.enqueue('q\r\nPING', 'TX-1', 'x'), RangeError],
    [() => c.enqueue('q/1', 'TX-1', 'x'), RangeError],
    [() => c.enqueue('q'.repeat(65), 'TX-1', 'x'), RangeError],
    [() => c.reserve(''), RangeError],
    [() => c.deadletters(null), TypeError],
    [() => c.redrive('q q', 'TX-1'), RangeError],
    [() => c.config('q\n'), RangeError],
    // attempt
    [() => c.sent('TX-1', 0), RangeError],
    [() => c.sent('TX-1', 1001), RangeError],
    [() => c.sent('TX-1', 1.5), RangeError],
    [() => c.sent('TX-1', '1 2'), TypeError],
    [() => c.release('TX-1', -1), RangeError],
    [() => c.respond('TX-1', NaN, 'SUCCESS'), RangeError],
    // durations
    [() => c.reserve('q', { wait: -1 }), RangeError],
    [() => c.reserve('q', { wait: 1.5 }), RangeError],
    [() => c.reserve('q', { wait: '5 s' }), RangeError],
    [() => c.reserve('q', { wait: '5x' }), RangeError],
    [() => c.reserve('q', { wait: '3651d' }), RangeError],
    [() => c.reserve('q', { wait: 'wait=1s\r\nPING' }), RangeError],
    [() => c.release('TX-1', 1, { delay: Infinity }), RangeError],
    [() => c.respond('TX-1', 1, 'TRANSIENT', { retryAfter: '1s\r\n' }), RangeError],
    [() => c.enqueue('q', 'TX-1', 'x', { base: {} }), TypeError],
    // reasons and outcomes
    [() => c.release('TX-1', 1, { reason: 'two words' }), RangeError],
    [() => c.respond('TX-1', 1, 'REJECTED', { reason: 'x\r\nSTATS' }), RangeError],
    [() => c.respond('TX-1', 1, 'REJECTED', { reason: '' }), RangeError],
    [() => c.respond('TX-1', 1, 'success'), RangeError],
    [() => c.respond('TX-1', 1, 'SUCCESS\r\n'), RangeError],
    [() => c.resolve('TX-1', 'SUCCESS'), RangeError],
    [() => c.resolve('TX-1', 'FAILED', { reason: 'a b' }), RangeError],
    // options
    [() => c.enqueue('q', 'TX-1', 'x', { maxAtempts: 3 }), RangeError],
    [() => c.enqueue('q', 'TX-1', 'x', { maxAttempts: '3 4' }), TypeError],
    [() => c.enqueue('q', 'TX-1', 'x', { factor: '1.5\r\n' }), RangeError],
    [() => c.enqueue('q', 'TX-1', 'x', { factor: -1 }), RangeError],
    [() => c.enqueue('q', 'TX-1', 'x', { jitter: '1e-3' }), RangeError],
    [() => c.enqueue('q', 'TX-1', 'x', { sent: 'yes' }), TypeError],
    [() => c.enqueue('q', 'TX-1', { amount: 1 }), TypeError],
    [() => c.enqueue('q', 'TX-1', 'x', 'max_attempts=2'), TypeError],
    [() => c.history('TX-1', { limit: 0 }), RangeError],
    [() => c.deadletters('q', { limit: 100001 }), RangeError],
    [() => c.list('q', 'stuck'), RangeError],
    [() => c.list('q', 7), TypeError],
    [() => c.list('q q', 'ready'), RangeError],
    [() => c.list('q', 'ready', { limit: 1001 }), RangeError],
    [() => c.list('q', 'ready', { after: 'a b' }), RangeError],
    [() => c.list('q', 'ready', { after: '' }), RangeError],
    [() => c.list('q', 'ready', { prefix: 'a\r\nPING' }), RangeError],
    [() => c.list('q', 'ready', { reason: 'two words' }), RangeError],
    [() => c.config('q', { 'bad name': 1 }), RangeError],
    [() => c.config('q', { base: '1s rate=5' }), RangeError],
    [() => c.config('q', { newSetting: 'a b' }), RangeError],
    [() => c.config('q', { newSetting: {} }), RangeError],
    // raw commands
    [() => c.command('ping'), RangeError],
    [() => c.command('GET', ['a b']), RangeError],
    [() => c.command('GET', ['a\r\nPING']), RangeError],
    [() => c.command('GET', 'TX-1'), TypeError],
    [() => c.command('QUIT'), RangeError],
    [() => c.auth('two words'), RangeError],
  ];
  for (const [call, type] of bad) {
    await assert.rejects(call(), type, call.toString());
  }
  // Nothing of the above reached the wire; the connection is still in step.
  assert.equal(await c.ping(), 'PONG');
  assert.equal(fake.received.toString('latin1'), 'PING\r\nPING\r\n');

  await assert.rejects(Client.connect({ port: fake.port, token: 'a b' }), RangeError);
  await assert.rejects(Client.connect({ port: 0 }), RangeError);
  await assert.rejects(Client.connect({ port: fake.port, timeoutMs: -5 }), RangeError);
  assert.throws(() => new Client({}), TypeError);
});

test('valid arguments are written exactly as the protocol spells them', async (t) => {
  const fake = await fakeServer(defaultAnswer);
  t.after(() => fake.close());
  const c = await Client.connect({ port: fake.port });
  t.after(() => c.destroy());
  const mark = fake.received.length;
  await c.enqueue('q', 'TX=1', Buffer.from('a\r\nb'), {
    maxAttempts: 4,
    base: 50,
    factor: 1.5,
    cap: '2h',
    jitter: 0,
    strictCap: true,
    deadline: '1d',
    delay: 0,
  });
  await c.enqueue('q', 'TX-2', 'ñ', { sent: true, max_attempts: 2, jitter: 1e-7 });
  await c.enqueue('q', 'TX-3');
  await c.reserve('q', { wait: 0 });
  await c.reserve('q', { wait: '2s' });
  await c.release('TX-1', 2, { delay: 1500, reason: 'SOCKET_RESET' });
  await c.respond('TX-1', 2, 'TRANSIENT', { reason: 'HTTP_503', retryAfter: 3000 });
  await c.resolve('TX-1', 'FAILED', { reason: 'BY_HAND' });
  await c.history('TX-1', { limit: 5 });
  const cfg = await c.config('q', { transientBase: '50ms', transient_cap: 200, breaker: false, rate: 2.5 });
  assert.deepEqual(cfg, { base: 50, factor: 1.5, jitter: 0, lease: 30000, rate: 2.5, futureThing: 'abc' });
  const sent = fake.received.subarray(mark).toString('latin1');
  assert.equal(
    sent,
    'ENQUEUE q TX=1 max_attempts=4 base=50ms factor=1.5 cap=2h jitter=0 strict_cap=1 deadline=1d delay=0ms 4\r\na\r\nb\r\n' +
      'ENQUEUE q TX-2 sent=1 max_attempts=2 jitter=0.0000001 2\r\n\xc3\xb1\r\n' +
      'ENQUEUE q TX-3 0\r\n\r\n' +
      'RESERVE q\r\n' +
      'RESERVE q wait=2s\r\n' +
      'RELEASE TX-1 2 delay=1500ms reason=SOCKET_RESET\r\n' +
      'RESPOND TX-1 2 TRANSIENT reason=HTTP_503 retry_after=3000ms\r\n' +
      'RESOLVE TX-1 FAILED reason=BY_HAND\r\n' +
      'HISTORY TX-1 limit=5\r\n' +
      'CONFIG q transient_base=50ms transient_cap=200ms breaker=0 rate=2.5\r\n',
  );
});

test('ERR replies become TardeError; INTERNAL keeps the connection open', async (t) => {
  const fake = await fakeServer(defaultAnswer);
  t.after(() => fake.close());
  const c = await Client.connect({ port: fake.port });
  t.after(() => c.destroy());
  const err = await c.command('INTERNALME').then(
    () => assert.fail('expected a rejection'),
    (e) => e,
  );
  assert.ok(err instanceof TardeError);
  assert.ok(err instanceof Error);
  assert.equal(err.code, 'INTERNAL');
  assert.equal(err.serverMessage, 'the store refused the write');
  assert.equal(err.command, 'INTERNALME');
  assert.equal(err.closesConnection, false);
  assert.equal(await c.ping(), 'PONG');
});

test('a command without a reply times out with ETIMEDOUT and fails the connection', async (t) => {
  let silent = false; // like a hung server: nothing from the GET on
  const fake = await fakeServer((tok) => {
    if (tok[0] === 'GET') silent = true;
    return silent ? null : defaultAnswer(tok);
  });
  t.after(() => fake.close());
  const c = await Client.connect({ port: fake.port, timeoutMs: 300 });
  let closeErr;
  c.on('close', (e) => {
    closeErr = e;
  });
  const started = Date.now();
  const get = c.get('TX-1');
  const behind = c.ping(); // pipelined behind the GET: fails with it
  await assert.rejects(get, { code: 'ETIMEDOUT' });
  assert.ok(Date.now() - started >= 250, 'not before the timeout');
  await assert.rejects(behind, { code: 'ETIMEDOUT' });
  await assert.rejects(c.ping(), { code: 'ETIMEDOUT' }, 'the client stays failed');
  assert.equal(c.closed, true);
  await waitFor(() => closeErr !== undefined, { what: 'close event' });
  assert.equal(closeErr.code, 'ETIMEDOUT');
});

test('RESERVE with wait gets wait + timeoutMs; commands behind it are not timed out early', async (t) => {
  const fake = await fakeServer((tok) => {
    if (tok[0] === 'RESERVE') return (sock) => setTimeout(() => sock.write('EMPTY\r\n'), 500);
    if (tok[0] === 'GET') return (sock) => setTimeout(() => sock.write('NOT_FOUND TX-1\r\n'), 520);
    return defaultAnswer(tok);
  });
  t.after(() => fake.close());
  const c = await Client.connect({ port: fake.port, timeoutMs: 300 });
  t.after(() => c.destroy());
  const started = Date.now();
  const [r, g] = await Promise.all([c.reserve('q', { wait: 500 }), c.get('TX-1')]);
  assert.equal(r, null);
  assert.equal(g, null);
  assert.ok(Date.now() - started >= 450);
});

test('connecting to a closed port rejects with ECONNREFUSED', async () => {
  const srv = net.createServer();
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  const port = srv.address().port;
  await new Promise((r) => srv.close(r));
  await assert.rejects(Client.connect({ port, timeoutMs: 2000 }), { code: 'ECONNREFUSED' });
});

test('the error-code table is the protocol\'s', () => {
  const expected = {
    BAD_COMMAND: false,
    BAD_ARGUMENT: false,
    UNAUTHORIZED: false,
    INTERNAL: false,
    LINE_TOO_LONG: true,
    PAYLOAD_TOO_LARGE: true,
    BAD_PAYLOAD: true,
    OVERLOADED: true,
    SHUTTING_DOWN: true,
    NOT_CONFIGURED: false,
    BUSY: false,
    BACKUP_FAILED: false,
  };
  assert.deepEqual(
    Object.fromEntries(Object.entries(ERROR_CODES).map(([k, v]) => [k, v.closesConnection])),
    expected,
  );
  for (const [code, closes] of Object.entries(expected)) {
    const e = new TardeError(code, 'why', 'GET');
    assert.equal(e.code, code);
    assert.equal(e.closesConnection, closes);
    assert.equal(e.message, `${code}: why`);
  }
  assert.equal(new TardeError('SOMETHING_NEW', 'x').closesConnection, false);

  // When the protocol reference is in the checkout, its table must match ours.
  const doc = path.resolve(__dirname, '..', '..', '..', 'net', 'PROTOCOL.md');
  if (fs.existsSync(doc)) {
    const text = fs.readFileSync(doc, 'utf8');
    const section = text.slice(text.indexOf('## Errors'));
    const rows = [...section.matchAll(/^\| `([A-Z_]+)` \|[^|]*\| (stays open|closed after the reply) \|$/gm)];
    assert.ok(rows.length >= 9, 'found the table');
    assert.deepEqual(Object.fromEntries(rows.map((m) => [m[1], m[2] !== 'stays open'])), expected);
  }
});
