'use strict';

// Every ERR code a client can provoke, against real servers started with the
// flags that make each one reachable. (INTERNAL needs a failing disk: it is
// covered against a fake server in validation.test.js.)

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { Client, TardeError, ERROR_CODES } = require('..');
const { startServer, TardeServer, tempDir, waitFor, waitForCommands } = require('../test-support/server');

const TOKEN = 's3cret-token_for!tests';
const servers = {};
let tokenDir;

test.before(async () => {
  tokenDir = tempDir('tarde-node-token-');
  const tokenFile = path.join(tokenDir, 'token');
  fs.writeFileSync(tokenFile, TOKEN + '\n', { mode: 0o600 });
  fs.chmodSync(tokenFile, 0o600);
  const [plain, auth, small, one] = await Promise.all([
    startServer({ label: 'plain' }),
    startServer({ label: 'auth', args: ['--auth-token-file', tokenFile] }),
    startServer({ label: 'small', args: ['--max-payload', '16'] }),
    startServer({ label: 'one', args: ['--max-connections', '1'] }),
  ]);
  Object.assign(servers, { plain, auth, small, one });
});

test.after(async () => {
  await Promise.all(Object.values(servers).map((s) => s.cleanup()));
  if (tokenDir) fs.rmSync(tokenDir, { recursive: true, force: true });
});

async function rejection(promise) {
  return promise.then(
    (v) => assert.fail(`expected a rejection, got ${JSON.stringify(v)}`),
    (e) => e,
  );
}

function assertTardeError(err, code) {
  assert.ok(err instanceof TardeError, `expected TardeError, got ${err && err.stack}`);
  assert.equal(err.code, code);
  assert.ok(code in ERROR_CODES, `${code} is in the table`);
  assert.equal(err.closesConnection, ERROR_CODES[code].closesConnection);
  assert.ok(err.serverMessage.length > 0, 'the server says why');
}

test('BAD_COMMAND and BAD_ARGUMENT keep the connection open', { timeout: 30000 }, async () => {
  const c = await Client.connect({ port: servers.plain.port });
  try {
    assertTardeError(await rejection(c.command('NOSUCHVERB')), 'BAD_COMMAND');
    assertTardeError(await rejection(c.command('GET')), 'BAD_COMMAND');
    // forms the client passes on to the server, which judges the range
    const e1 = await rejection(c.config('errq', { noSuchSetting: 1 }));
    assertTardeError(e1, 'BAD_ARGUMENT');
    assert.equal(e1.command, 'CONFIG');
    assertTardeError(await rejection(c.enqueue('errq', 'BA-1', 'x', { maxAttempts: 0 })), 'BAD_ARGUMENT');
    assertTardeError(await rejection(c.enqueue('errq', 'BA-2', 'x', { jitter: 2 })), 'BAD_ARGUMENT');
    assertTardeError(await rejection(c.enqueue('errq', 'BA-3', 'x', { sent: true, delay: '1s' })), 'BAD_ARGUMENT');
    assert.equal(await c.get('BA-1'), null, 'nothing was created');
    assert.equal(await c.ping(), 'PONG');
    assert.equal(c.closed, false);
  } finally {
    await c.close();
  }
});

test('an ERR for one pipelined command leaves the others and later calls alone', { timeout: 30000 }, async () => {
  const c = await Client.connect({ port: servers.plain.port });
  try {
    // Waiting reservations hold back the replies behind them: the ERR arrives
    // while other commands wait, and is handled while the reader waits for more.
    const first = c.reserve('pipeerr', { wait: 100 });
    const bad = c.command('NOSUCHVERB');
    const behind = c.reserve('pipeerr', { wait: 100 });
    const after = Promise.all([c.ping(), c.get('PE-1'), c.stats()]);
    await assert.rejects(bad, (err) => {
      assertTardeError(err, 'BAD_COMMAND');
      return true;
    });
    const [pong, missing, stats] = await after;
    assert.equal(pong, 'PONG');
    assert.equal(missing, null);
    assert.equal(typeof stats.commands, 'number');
    assert.equal(await first, null);
    assert.equal(await behind, null);
    assert.equal(await c.ping(), 'PONG');
    assert.equal(c.closed, false);
    assert.equal(c.pendingCount, 0);
  } finally {
    await c.close();
  }
});

test('LINE_TOO_LONG and BAD_PAYLOAD close the connection', { timeout: 30000 }, async () => {
  const c = await Client.connect({ port: servers.plain.port });
  const long = c.command('GET', ['A'.repeat(4096), 'B'.repeat(4096)]);
  const behind = c.ping();
  assertTardeError(await rejection(long), 'LINE_TOO_LONG');
  assert.equal((await rejection(behind)).code, 'ECONNRESET', 'a command pipelined behind it fails');
  assert.equal(c.closed, true);
  assert.equal((await rejection(c.ping())).code, 'ECONNRESET');

  const d = await Client.connect({ port: servers.plain.port });
  assertTardeError(await rejection(d.command('ENQUEUE', ['errq', 'BP-1', '5', 'x'])), 'BAD_PAYLOAD');
  assert.equal(d.closed, true);
  d.destroy();
});

test('UNAUTHORIZED until AUTH; a wrong token is refused at connect', { timeout: 30000 }, async () => {
  const port = servers.auth.port;
  const anon = await Client.connect({ port });
  try {
    assert.equal(await anon.ping(), 'PONG', 'PING needs no AUTH');
    assertTardeError(await rejection(anon.get('A-1')), 'UNAUTHORIZED');
    assertTardeError(await rejection(anon.auth('wrong')), 'UNAUTHORIZED');
    assert.equal(anon.closed, false, 'the connection stays open');
    assert.equal(await anon.auth(TOKEN), 'OK');
    assert.equal(await anon.get('A-1'), null);
  } finally {
    await anon.close();
  }
  assertTardeError(await rejection(Client.connect({ port, token: 'not-the-token' })), 'UNAUTHORIZED');
  const ok = await Client.connect({ port, token: TOKEN });
  try {
    assert.equal((await ok.enqueue('authq', 'A-2', 'x')).status, 'CREATED');
  } finally {
    await ok.close();
  }
});

test('PAYLOAD_TOO_LARGE over --max-payload closes the connection', { timeout: 30000 }, async () => {
  const c = await Client.connect({ port: servers.small.port });
  assert.equal((await c.enqueue('pq', 'PL-1', 'x'.repeat(16))).status, 'CREATED', '16 bytes are allowed');
  const big = c.enqueue('pq', 'PL-2', 'x'.repeat(17));
  const behind = c.get('PL-1');
  assertTardeError(await rejection(big), 'PAYLOAD_TOO_LARGE');
  assert.equal((await rejection(behind)).code, 'ECONNRESET');
  assert.equal(c.closed, true);
  const d = await Client.connect({ port: servers.small.port });
  assert.equal(await d.get('PL-2'), null);
  await d.close();
});

test('OVERLOADED over --max-connections', { timeout: 30000 }, async () => {
  const first = await Client.connect({ port: servers.one.port });
  try {
    assertTardeError(await rejection(Client.connect({ port: servers.one.port })), 'OVERLOADED');
    assert.equal(await first.ping(), 'PONG');
  } finally {
    await first.close();
  }
  // the slot is free again
  const again = await waitFor(() => Client.connect({ port: servers.one.port }), { what: 'a free connection slot' });
  await again.close();
});

test('SHUTTING_DOWN: a waiting RESERVE when the server gets SIGTERM', { timeout: 30000 }, async () => {
  const server = await new TardeServer({ label: 'stopping' }).start();
  try {
    const c = await Client.connect({ port: server.port });
    const observer = await Client.connect({ port: server.port });
    const base = (await observer.stats()).commands;
    const waiting = c.reserve('sdq', { wait: '20s' });
    let closeErr;
    c.on('close', (e) => {
      closeErr = e;
    });
    // Be sure the RESERVE reached the server before the signal.
    await waitForCommands(observer, base, 1, 'the server to read the RESERVE');
    observer.destroy();
    const exit = server.stop('SIGTERM');
    assertTardeError(await rejection(waiting), 'SHUTTING_DOWN');
    assert.deepEqual(await exit, { code: 0, signal: null });
    await waitFor(() => c.closed && closeErr !== undefined, { what: 'the close event' });
    assert.equal((await rejection(c.ping())).code, 'ECONNRESET');
  } finally {
    await server.cleanup();
  }
});
