#!/usr/bin/env node
'use strict';
// Enqueue N transactions into a tarde queue.
//
//   node examples/node/producer.js --port 7400 --queue payments -n 10 [--prefix OK-] [--base 2s]
//
// Each transaction gets the id <prefix>TX-<run>-<i> and a small JSON payload;
// with examples/external_service.py a prefix (OK-, NOTNOW-, BUSY-, CONFLICT-)
// fixes the answer it will give. Prints one line per transaction:
// <STATUS> <txId> <state>.

const crypto = require('node:crypto');
const { parseArgs } = require('node:util');
const { Client } = require('../../clients/node');

async function main() {
  const { values: args } = parseArgs({
    options: {
      host: { type: 'string', default: '127.0.0.1' },
      port: { type: 'string', default: '7400' },
      token: { type: 'string' }, // AUTH token, when the server wants one
      queue: { type: 'string', default: 'payments' },
      count: { type: 'string', short: 'n', default: '10' },
      prefix: { type: 'string', default: '' }, // e.g. OK- or NOTNOW-
      base: { type: 'string', default: '2s' }, // wait after a CANCELLED (50ms, 2s, 2h)
      'max-attempts': { type: 'string', default: '4' },
    },
  });
  const run = crypto.randomBytes(4).toString('hex');
  const client = await Client.connect({ host: args.host, port: Number(args.port), token: args.token });
  try {
    const replies = [];
    for (let i = 0; i < Number(args.count); i++) {
      const txId = `${args.prefix}TX-${run}-${i}`;
      const payload = JSON.stringify({ order: i, amount: 100 + i });
      // pipelined: every ENQUEUE is written at once, the replies come in order
      replies.push(client.enqueue(args.queue, txId, payload, {
        base: args.base,
        jitter: 0,
        maxAttempts: Number(args['max-attempts']),
      }));
    }
    for (const r of await Promise.all(replies)) console.log(r.status, r.txId, r.state);
  } finally {
    await client.close();
  }
}

main().catch((err) => {
  console.error(`producer: ${err.message}`);
  process.exitCode = 1;
});
