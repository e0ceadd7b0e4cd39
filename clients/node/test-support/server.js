'use strict';

// Starts real tarde servers for the tests. The binary is $TARDE_BIN, else
// <repo>/build/bin/tarde. (This folder is outside test/ so that
// `node --test clients/node/test/` does not run it as a test file.)

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('..');

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');
const TARDE_BIN = process.env.TARDE_BIN || path.join(REPO_ROOT, 'build', 'bin', 'tarde');

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

// Whatever happens to a test, no server outlives the test process, and no
// server keeps the test process alive.
const live = new Set();
process.on('exit', () => {
  for (const proc of live) {
    try {
      proc.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value (returned) or the deadline passes (throws). */
async function waitFor(fn, { timeoutMs = 10000, intervalMs = 20, what = 'condition' } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ': ' + last.message : ''}`);
    }
    await sleep(intervalMs);
  }
}

/**
 * Waits until the server has read `count` commands from other connections
 * since `base` (a `commands` figure from client.stats()). The server counts a
 * command when it reads it, also a RESERVE that then waits; each STATS this
 * function sends counts one more.
 */
async function waitForCommands(client, base, count, what = `${count} commands`) {
  let polls = 0;
  await waitFor(async () => {
    polls++;
    return (await client.stats()).commands - base - polls >= count;
  }, { what });
}

function tempDir(prefix = 'tarde-node-test-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

class TardeServer {
  constructor({ args = [], dataDir, port, label = 'tarde' } = {}) {
    this.args = args;
    this.ownsDataDir = !dataDir;
    this.dataDir = dataDir || tempDir();
    this.port = port;
    this.label = label;
    this.proc = null;
    this.log = '';
    this.exited = null;
  }

  async start() {
    if (!fs.existsSync(TARDE_BIN)) {
      throw new Error(`tarde binary not found at ${TARDE_BIN}: build the project or set TARDE_BIN`);
    }
    if (!this.port) this.port = await freePort();
    const argv = ['serve', '--listen', `127.0.0.1:${this.port}`, '--data', this.dataDir, '--log-level', 'warn', ...this.args];
    const proc = spawn(TARDE_BIN, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.proc = proc;
    live.add(proc);
    this.exited = new Promise((resolve) =>
      proc.once('exit', (code, signal) => {
        live.delete(proc);
        resolve({ code, signal });
      }),
    );
    const keep = (d) => {
      this.log = (this.log + d.toString()).slice(-8000);
    };
    proc.stdout.on('data', keep);
    proc.stderr.on('data', keep);
    proc.unref();
    proc.stdout.unref();
    proc.stderr.unref();
    let exitedEarly = null;
    this.exited.then((r) => {
      exitedEarly = r;
    });
    await waitFor(
      async () => {
        if (exitedEarly) throw new Error(`server exited ${JSON.stringify(exitedEarly)}: ${this.log}`);
        const c = await Client.connect({ port: this.port, timeoutMs: 1000 });
        await c.close();
        return true;
      },
      { timeoutMs: 10000, intervalMs: 25, what: `${this.label} on port ${this.port}` },
    ).catch((err) => {
      this.kill();
      throw new Error(`${err.message}\n${this.log}`);
    });
    return this;
  }

  /** Sends `signal` and waits for the exit (SIGKILL after 10 s). */
  async stop(signal = 'SIGTERM') {
    if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill(signal);
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 10000);
    const r = await this.exited;
    clearTimeout(timer);
    return r;
  }

  kill() {
    if (this.proc && this.proc.exitCode === null && this.proc.signalCode === null) this.proc.kill('SIGKILL');
  }

  /** Stops (SIGKILL by default) and starts again on the same port and data directory. */
  async restart(signal = 'SIGKILL') {
    await this.stop(signal);
    return this.start();
  }

  async cleanup() {
    await this.stop('SIGKILL');
    if (this.ownsDataDir) fs.rmSync(this.dataDir, { recursive: true, force: true });
  }
}

async function startServer(options) {
  return new TardeServer(options).start();
}

module.exports = { TARDE_BIN, REPO_ROOT, TardeServer, startServer, freePort, waitFor, waitForCommands, sleep, tempDir };
