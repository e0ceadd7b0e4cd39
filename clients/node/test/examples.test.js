'use strict';

// examples/node/producer.js and dispatcher.js against a real server and
// examples/external_service.py (skipped when python3 or the service is missing).

const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { Client } = require('..');
const { startServer, waitFor, REPO_ROOT } = require('../test-support/server');

const SERVICE = path.join(REPO_ROOT, 'examples', 'external_service.py');
const EXAMPLES = path.join(REPO_ROOT, 'examples', 'node');
const havePython = spawnSync('python3', ['--version']).status === 0;
const skip = !fs.existsSync(SERVICE) ? 'examples/external_service.py is missing' : !havePython ? 'python3 is missing' : false;

const children = new Set();

function run(file, args, opts = {}) {
  const child = spawn(process.execPath, [path.join(EXAMPLES, file), ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  children.add(child);
  const result = { out: '', err: '' };
  child.stdout.on('data', (d) => (result.out += d));
  child.stderr.on('data', (d) => (result.err += d));
  result.exited = new Promise((resolve) =>
    child.once('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    }),
  );
  result.child = child;
  return result;
}

function getJson(port, p) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: p }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(JSON.parse(body)));
    }).on('error', reject);
  });
}

let server;
let service;
let servicePort;

test.before(async () => {
  if (skip) return;
  server = await startServer();
  service = spawn('python3', [SERVICE, '--port', '0', '--mode', 'random', '--seed', '7'], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(service);
  let first = '';
  service.stdout.on('data', (d) => (first += d));
  await waitFor(() => /listening on 127\.0\.0\.1:(\d+)/.test(first), { what: 'the example service' });
  servicePort = Number(/listening on 127\.0\.0\.1:(\d+)/.exec(first)[1]);
});

test.after(async () => {
  for (const child of children) child.kill('SIGKILL');
  if (server) await server.cleanup();
});

test('producer.js and dispatcher.js drive every transaction to its end', { skip, timeout: 60000 }, async () => {
  const q = 'examples';
  const produced = [];
  for (const prefix of ['', 'OK-', 'NOTNOW-', 'CONFLICT-']) {
    const p = run('producer.js', ['--port', String(server.port), '--queue', q, '-n', prefix ? '2' : '12', '--prefix', prefix, '--base', '50ms', '--max-attempts', '3']);
    assert.deepEqual(await p.exited, { code: 0, signal: null }, p.err);
    const lines = p.out.trim().split('\n');
    assert.equal(lines.length, prefix ? 2 : 12);
    for (const line of lines) {
      const [status, txId, state] = line.split(' ');
      assert.equal(status, 'CREATED');
      assert.equal(state, 'SENDING');
      produced.push(txId);
    }
  }
  const c = await Client.connect({ port: server.port });
  try {
    const d = run('dispatcher.js', ['--port', String(server.port), '--queue', q, '--service', `http://127.0.0.1:${servicePort}/charge`, '--concurrency', '4']);
    const txs = await waitFor(async () => {
      const all = await Promise.all(produced.map((id) => c.get(id)));
      return all.every((tx) => tx.state === 'SUCCEEDED' || tx.state === 'FAILED') ? all : null;
    }, { timeoutMs: 45000, intervalMs: 100, what: 'every transaction to end' });
    d.child.kill('SIGTERM');
    assert.deepEqual(await d.exited, { code: 0, signal: null }, d.err);
    assert.match(d.out, /stopped: \{.*"handled":\d+/);

    const byId = Object.fromEntries(txs.map((tx) => [tx.txId, tx]));
    for (const id of produced.filter((t) => t.startsWith('OK-'))) assert.equal(byId[id].state, 'SUCCEEDED');
    for (const id of produced.filter((t) => t.startsWith('CONFLICT-'))) {
      assert.equal(byId[id].state, 'FAILED');
      assert.equal(byId[id].reason, 'HTTP_409');
    }
    for (const id of produced.filter((t) => t.startsWith('NOTNOW-'))) {
      assert.equal(byId[id].state, 'FAILED');
      assert.equal(byId[id].reason, 'EXHAUSTED');
      assert.equal(byId[id].attempt, 3);
    }
    const stats = await getJson(servicePort, '/stats');
    assert.equal(stats.repeats_after_final, 0);
    assert.ok(stats.requests >= produced.length);
  } finally {
    c.destroy();
  }
});
