#!/usr/bin/env node
'use strict';
// A tarde dispatcher that calls an HTTP service for each request.
//
//   node examples/node/dispatcher.js --port 7400 --queue payments \
//       --service http://127.0.0.1:8080/charge [--concurrency 8]
//
// Each request is POSTed with its payload and `Idempotency-Key: <txId>#<attempt>`.
// A `200 {"result":"not_now"}` is the business saying "later": CANCELLED.
// Every other answer goes through answerFromHttp (2xx SUCCESS, 429/503
// TRANSIENT with Retry-After, other 5xx TRANSIENT, 4xx REJECTED); no answer at
// all (timeout, refused) is TRANSIENT. Stop it with Ctrl-C or SIGTERM: running
// calls finish, what is still reserved is handed back.

const { parseArgs } = require('node:util');
const { Dispatcher, Answer, answerFromHttp } = require('../../clients/node');

function makeHandler(url, httpTimeoutMs) {
  return async function handle(request, signal) {
    // Give up on the call after httpTimeoutMs, or when the dispatcher closes.
    const timeout = new AbortController();
    const timer = setTimeout(() => timeout.abort(), httpTimeoutMs);
    const onClose = () => timeout.abort();
    signal.addEventListener('abort', onClose);
    let res;
    let body;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'Idempotency-Key': request.key, 'Content-Type': 'application/json' },
        body: request.payload,
        signal: timeout.signal,
      });
      body = await res.text();
    } catch {
      return answerFromHttp(null); // no answer: TRANSIENT
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', onClose);
    }
    if (res.status === 200) {
      try {
        if (JSON.parse(body).result === 'not_now') return Answer.cancelled({ reason: 'NOT_NOW' });
      } catch {
        // not JSON: let the status decide
      }
    }
    return answerFromHttp(res.status, res.headers);
  };
}

function main() {
  const { values: args } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '7400' },
      token: { type: 'string' },
      queue: { type: 'string', default: 'payments' },
      service: { type: 'string', default: 'http://127.0.0.1:8080/charge' }, // URL to POST to
      concurrency: { type: 'string', default: '8' },
      'http-timeout': { type: 'string', default: '10' }, // seconds
      'shutdown-timeout': { type: 'string', default: '30' }, // seconds
    },
  });
  const dispatcher = new Dispatcher(args.queue, makeHandler(args.service, Number(args['http-timeout']) * 1000), {
    host: args.host,
    port: Number(args.port),
    token: args.token,
    concurrency: Number(args.concurrency),
    shutdownTimeoutMs: Number(args['shutdown-timeout']) * 1000,
    handleSignals: true, // SIGTERM / Ctrl-C: close gracefully, then the process exits
  });
  console.log(`dispatching ${args.queue} from ${args.host}:${args.port} to ${args.service}`);
  dispatcher.on('close', () => console.log('stopped:', JSON.stringify(dispatcher.stats)));
  dispatcher.start();
}

main();
