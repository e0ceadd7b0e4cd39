#!/usr/bin/env node
'use strict';
// Soak: a producer and a Dispatcher against a running tarde and a running
// examples/external_service.py (random mode).
//
//   node clients/node/soak.js --port P --service-port S [--seconds 60] [--concurrency 8]
//
// Sets `CONFIG <queue> transient_base=50ms transient_cap=200ms`, then for
// --seconds enqueues continuously (base=50ms, jitter=0, max_attempts=4),
// keeping at most --backlog transactions unfinished, while a Dispatcher with
// --concurrency workers calls the service (POST /charge, Idempotency-Key) and
// answers: not_now -> CANCELLED, else answerFromHttp. Then it stops
// producing, drains until every transaction is terminal (checked with GET),
// and prints the figures. Exits 1 when a transaction did not end or the
// service saw a repeat after a final answer.

const http = require('node:http');
const { parseArgs } = require('node:util');
const { Client, Dispatcher, Answer, answerFromHttp } = require('.');

const { values: args } = parseArgs({
  options: {
    host: { type: 'string', default: '127.0.0.1' },
    port: { type: 'string' },
    token: { type: 'string' },
    'service-host': { type: 'string', default: '127.0.0.1' },
    'service-port': { type: 'string' },
    queue: { type: 'string', default: `soak-${process.pid}` },
    seconds: { type: 'string', default: '60' },
    concurrency: { type: 'string', default: '8' },
    backlog: { type: 'string', default: '1000' },
    'drain-seconds': { type: 'string', default: '120' },
  },
});
if (!args.port || !args['service-port']) {
  console.error('usage: node clients/node/soak.js --port TARDE_PORT --service-port SERVICE_PORT [--seconds 60] [--concurrency 8]');
  process.exit(2);
}
const port = Number(args.port);
const servicePort = Number(args['service-port']);
const seconds = Number(args.seconds);
const concurrency = Number(args.concurrency);
const backlog = Number(args.backlog);
const queue = args.queue;
const connect = { host: args.host, port, token: args.token };

const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

function post(key, payload, signal) {
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: args['service-host'],
        port: servicePort,
        method: 'POST',
        path: '/charge',
        agent,
        signal,
        timeout: 10000,
        headers: { 'Idempotency-Key': key, 'Content-Type': 'application/json', 'Content-Length': payload.length },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
        res.on('error', () => resolve(null));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(null));
    req.end(payload);
  });
}

function getJson(path) {
  return new Promise((resolve, reject) => {
    http
      .get({ host: args['service-host'], port: servicePort, path }, (res) => {
        let body = '';
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve(JSON.parse(body)));
      })
      .on('error', reject);
  });
}

async function handler(request, signal) {
  const res = await post(request.key, request.payload, signal);
  if (res === null) return answerFromHttp(null); // no answer: TRANSIENT
  if (res.status === 200 && res.body.includes('"not_now"')) return Answer.cancelled({ reason: 'NOT_NOW' });
  return answerFromHttp(res.status, res.headers);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function main() {
  const client = await Client.connect(connect);
  const before = await getJson('/stats');
  await client.config(queue, { transientBase: '50ms', transientCap: '200ms' });
  console.log(`soak: queue ${queue}, ${seconds} s, concurrency ${concurrency}, tarde ${args.host}:${port}, service port ${servicePort}`);

  const dispatcher = new Dispatcher(queue, handler, { ...connect, concurrency, reserveWaitMs: 500 });
  dispatcher.start();

  // Producer: pipelined ENQUEUEs, keeping at most `backlog` unfinished.
  const ids = [];
  let unfinished = 0;
  const started = Date.now();
  const stopAt = started + seconds * 1000;
  let lastReport = started;
  let handledAtStop = 0;
  while (Date.now() < stopAt) {
    const s = await client.stats();
    unfinished = (s.sending || 0) + (s.in_flight || 0) + (s.scheduled || 0);
    const room = Math.min(200, backlog - unfinished);
    if (room > 0) {
      const batch = [];
      for (let i = 0; i < room; i++) {
        const txId = `SOAK-${process.pid}-${ids.length}`;
        ids.push(txId);
        batch.push(client.enqueue(queue, txId, `{"n":${ids.length}}`, { base: 50, jitter: 0, maxAttempts: 4 }));
      }
      await Promise.all(batch);
    } else {
      await sleep(10);
    }
    if (Date.now() - lastReport >= 10000) {
      lastReport = Date.now();
      const el = (lastReport - started) / 1000;
      console.log(`  ${el.toFixed(0)} s: enqueued ${ids.length}, handler cycles ${dispatcher.stats.handled} (${(dispatcher.stats.handled / el).toFixed(0)}/s), unfinished ${unfinished}`);
    }
  }
  handledAtStop = dispatcher.stats.handled;
  const produceSeconds = (Date.now() - started) / 1000;

  // Drain: wait for the server's unfinished count to reach 0, then check every transaction.
  const drainStart = Date.now();
  const drainDeadline = drainStart + Number(args['drain-seconds']) * 1000;
  for (;;) {
    const s = await client.stats();
    unfinished = (s.sending || 0) + (s.in_flight || 0) + (s.scheduled || 0);
    if (unfinished === 0 || Date.now() > drainDeadline) break;
    await sleep(100);
  }
  const drainSeconds = (Date.now() - drainStart) / 1000;
  await dispatcher.close();

  let terminal = 0;
  const byState = {};
  const byReason = {};
  for (let i = 0; i < ids.length; i += 1000) {
    const txs = await Promise.all(ids.slice(i, i + 1000).map((id) => client.get(id)));
    for (const tx of txs) {
      const state = tx ? tx.state : 'MISSING';
      byState[state] = (byState[state] || 0) + 1;
      if (state === 'SUCCEEDED' || state === 'FAILED') terminal++;
      if (state === 'FAILED') byReason[tx.reason] = (byReason[tx.reason] || 0) + 1;
    }
  }
  await client.close();
  agent.destroy();
  const after = await getJson('/stats');
  const repeats = after.repeats_after_final - before.repeats_after_final;
  const allTerminal = terminal === ids.length;
  const st = dispatcher.stats;

  console.log(`transactions: ${ids.length}`);
  console.log(`all terminal: ${allTerminal ? 'yes' : 'no'} (${JSON.stringify(byState)}; failed by reason ${JSON.stringify(byReason)})`);
  console.log(`repeats_after_final: ${repeats} (service total ${after.repeats_after_final}; requests ${after.requests - before.requests})`);
  console.log(`handler cycles: ${st.handled} (success ${st.success}, cancelled ${st.cancelled}, transient ${st.transient}, rejected ${st.rejected}, handler errors ${st.handlerErrors}, stale ${st.stale}, reconnects ${st.reconnects})`);
  console.log(`handler cycles per second: ${(handledAtStop / produceSeconds).toFixed(1)} while producing (${produceSeconds.toFixed(1)} s); drain took ${drainSeconds.toFixed(1)} s`);
  if (!allTerminal || repeats !== 0) process.exitCode = 1;
}

main().catch((err) => {
  console.error(`soak: ${err.stack || err.message}`);
  process.exitCode = 1;
});
