'use strict';

// The reply parser, fed replies split at every byte boundary (no server).

const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { ReplyParser, Client } = require('..');

const PAYLOAD = Buffer.from([0x7b, 0x0d, 0x0a, 0x00, 0xff, 0x0a, 0x53, 0x54, 0x41, 0x54, 0x53, 0x20, 0x32, 0x0d, 0x0a, 0x7d]);

function stream() {
  return Buffer.concat([
    Buffer.from('CREATED TX-1 SENDING 0 1 0\r\n'),
    Buffer.from(`REQUEST TX-1 1 TX-1#1 1 ${PAYLOAD.length}\r\n`),
    PAYLOAD,
    Buffer.from('\r\n'),
    Buffer.from('REQUEST TX-2 3 TX-2#3 2 0\r\n\r\n'),
    Buffer.from('EMPTY\r\n'),
    Buffer.from('STATS 3\r\nuptime_ms 10\r\nconnections 1\r\nbreaker.q 0\r\n'),
    Buffer.from('EVENTS 0\r\n'),
    Buffer.from('EVENTS 2\r\nEVENT at=1 from=- to=SENDING attempt=0 next_attempt=1 cause=ENQUEUE reason=-\r\n'),
    Buffer.from('EVENT at=2 from=SENDING to=IN_FLIGHT attempt=1 next_attempt=0 cause=SENT reason=-\r\n'),
    Buffer.from('LETTERS 1\r\nLETTER tx=TX-9 attempt=2 key=TX-9#2 deliveries=5 buried_at=3 last_error=LEASE_EXPIRED\r\n'),
    Buffer.from('ERR BAD_COMMAND unknown command \'X\'\r\n'),
    Buffer.from('TX id=a=b queue=q state=SENDING attempt=0 next_attempt=1 reason=- payload_bytes=0\n'),
    Buffer.from('PONG\r\n'),
    Buffer.from('ITEMS 0 next=-\r\n'),
    Buffer.from('ITEMS 1 next=tTX-9\r\nITEM tx=TX-9 state=FAILED attempt=1 next_attempt=0 next_fire_at=0 updated_at=3 deliveries=0 reason=CARD\r\n'),
  ]);
}

function parseAll(chunks) {
  const parser = new ReplyParser();
  const frames = [];
  for (const c of chunks) frames.push(...parser.push(c));
  assert.equal(parser.idle, true, 'nothing left over');
  return frames;
}

test('whole stream parses into the expected frames', () => {
  const frames = parseAll([stream()]);
  assert.equal(frames.length, 13);
  assert.deepEqual(frames[0].tokens, ['CREATED', 'TX-1', 'SENDING', '0', '1', '0']);
  assert.equal(frames[1].tokens[0], 'REQUEST');
  assert.deepEqual(frames[1].payload, PAYLOAD);
  assert.deepEqual(frames[2].payload, Buffer.alloc(0));
  assert.equal(frames[3].line, 'EMPTY');
  assert.deepEqual(frames[4].lines, ['uptime_ms 10', 'connections 1', 'breaker.q 0']);
  assert.deepEqual(frames[5].lines, []);
  assert.equal(frames[6].lines.length, 2);
  assert.equal(frames[7].lines[0].startsWith('LETTER tx=TX-9'), true);
  assert.equal(frames[8].tokens[1], 'BAD_COMMAND');
  assert.equal(frames[9].tokens[0], 'TX', 'a bare LF ends a line too');
  assert.equal(frames[10].line, 'PONG');
  assert.deepEqual(frames[11].lines, []);
  assert.equal(frames[12].lines[0].startsWith('ITEM tx=TX-9'), true);

});

test('every split point gives the same frames', () => {
  const all = stream();
  const expected = parseAll([all]);
  for (let i = 0; i <= all.length; i++) {
    assert.deepEqual(parseAll([all.subarray(0, i), all.subarray(i)]), expected, `split at ${i}`);
  }
});

test('one byte at a time gives the same frames', () => {
  const all = stream();
  const expected = parseAll([all]);
  const bytes = [];
  for (let i = 0; i < all.length; i++) bytes.push(all.subarray(i, i + 1));
  assert.deepEqual(parseAll(bytes), expected);
});

test('every pair of split points in a REQUEST and a STATS reply', () => {
  const all = Buffer.concat([
    Buffer.from(`REQUEST T 1 T#1 1 ${PAYLOAD.length}\r\n`),
    PAYLOAD,
    Buffer.from('\r\nSTATS 2\r\na 1\r\nb 2\r\n'),
  ]);
  const expected = parseAll([all]);
  assert.equal(expected.length, 2);
  for (let i = 0; i <= all.length; i++) {
    for (let j = i; j <= all.length; j++) {
      const got = parseAll([all.subarray(0, i), all.subarray(i, j), all.subarray(j)]);
      assert.deepEqual(got, expected, `split at ${i} and ${j}`);
    }
  }
});

test('a large payload arriving in many chunks', () => {
  const big = Buffer.alloc(300000, 0x41);
  big[12345] = 0x0a;
  const all = Buffer.concat([Buffer.from(`REQUEST T 1 T#1 1 ${big.length}\r\n`), big, Buffer.from('\r\nPONG\r\n')]);
  const chunks = [];
  for (let i = 0; i < all.length; i += 7919) chunks.push(all.subarray(i, i + 7919));
  const frames = parseAll(chunks);
  assert.equal(frames.length, 2);
  assert.deepEqual(frames[0].payload, big);
  assert.equal(frames[1].line, 'PONG');
});

test('EVENT lines: due, late, seq and the dropped marker, and an older server without them', () => {
  const { decodeEvents } = require('../lib/protocol');
  const [frame] = parseAll([Buffer.from(
    'EVENTS 3\r\n' +
    'EVENT at=5 from=- to=SENDING attempt=0 next_attempt=1 cause=ENQUEUE reason=- due=- late=- seq=0\r\n' +
    'EVENT at=1003 from=SCHEDULED to=SENDING attempt=1 next_attempt=2 cause=timer reason=- due=1000 late=3 seq=14 dropped=12\r\n' +
    'EVENT at=1004 from=SENDING to=IN_FLIGHT attempt=1 next_attempt=0 cause=SENT reason=-\r\n')]);
  const events = decodeEvents(frame);
  assert.deepEqual(events.map((e) => [e.due, e.late, e.seq, e.dropped]), [
    [null, null, 0, 0],
    [1000, 3, 14, 12],
    [null, null, null, 0], // an older server's line
  ]);
  assert.equal(events.reduce((n, e) => n + e.dropped, 0), 12);
  for (const bad of ['late=-1', 'due=soon', 'dropped=1.5']) {
    const [badFrame] = parseAll([Buffer.from(`EVENTS 1\r\nEVENT at=5 from=- to=SENDING attempt=0 next_attempt=1 cause=ENQUEUE reason=- ${bad}\r\n`)]);
    assert.throws(() => decodeEvents(badFrame), { code: 'EPROTO' }, bad);
  }
});

test('malformed replies are protocol errors (EPROTO)', () => {
  assert.throws(() => new ReplyParser().push(Buffer.from('REQUEST T 1 T#1 1 x\r\n')), { code: 'EPROTO' });
  assert.throws(() => new ReplyParser().push(Buffer.from('REQUEST T 1 T#1 1 2\r\nabXY')), { code: 'EPROTO' });
  assert.throws(() => new ReplyParser().push(Buffer.from('STATS x\r\n')), /bad STATS count/);
});

// The client on top of the parser: a fake server that answers pipelined
// commands one byte per write.
test('client matches pipelined replies delivered one byte per TCP write', async (t) => {
  const replies = [];
  const server = net.createServer((sock) => {
    sock.setNoDelay(true);
    let buf = '';
    sock.on('data', async (d) => {
      buf += d.toString('latin1');
      let out = '';
      let i;
      while ((i = buf.indexOf('\r\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        const tok = line.split(' ');
        if (tok[0] === 'PING') out += 'PONG\r\n';
        else if (tok[0] === 'GET') out += `TX id=${tok[1]} queue=q state=SENDING attempt=0 next_attempt=1 reason=- payload_bytes=0\r\n`;
        else if (tok[0] === 'RESERVE') out += `REQUEST ${tok[1]}-tx 1 ${tok[1]}-tx#1 1 4\r\n${tok[1].slice(0, 4).padEnd(4, '.')}\r\n`;
        else if (tok[0] === 'STATS') out += 'STATS 2\r\nuptime_ms 5\r\nconnections 1\r\n';
        else if (tok[0] === 'QUIT') out += 'BYE\r\n';
        else out += 'ERR BAD_COMMAND nope\r\n';
      }
      replies.push(out);
      const bytes = Buffer.from(out, 'latin1');
      for (let k = 0; k < bytes.length; k++) {
        sock.write(bytes.subarray(k, k + 1));
        if (k % 16 === 0) await new Promise((r) => setImmediate(r));
      }
      if (out.endsWith('BYE\r\n')) sock.end();
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const client = await Client.connect({ port: server.address().port, timeoutMs: 5000 });
  const work = [];
  for (let i = 0; i < 40; i++) {
    work.push(client.get(`TX-${i}`).then((tx) => assert.equal(tx.txId, `TX-${i}`)));
    work.push(client.reserve(`Q${i}`).then((r) => {
      assert.equal(r.txId, `Q${i}-tx`);
      assert.equal(r.payload.toString(), `Q${i}`.slice(0, 4).padEnd(4, '.'));
    }));
    work.push(client.stats().then((s) => assert.deepEqual(s, { uptime_ms: 5, connections: 1 })));
  }
  await Promise.all(work);
  await client.close();
  assert.ok(replies.length >= 1);
});

test('parser: payloads after TX and LETTER lines, split at every byte', () => {
  const stream = Buffer.from(
    'TX id=a payload_bytes=3\r\na\r\n\r\nLETTERS 2\r\nLETTER tx=b payload_bytes=0\r\n\r\n' +
      'LETTER tx=c payload_bytes=2\r\nxy\r\nTX id=d payload_bytes=1\r\nPONG\r\n',
  );
  const wants = [true, true, false, false];
  for (let cut = 0; cut <= stream.length; cut++) {
    const frames = [];
    const parser = new ReplyParser((i) => wants[frames.length + i]);
    for (const part of [stream.subarray(0, cut), stream.subarray(cut)]) frames.push(...parser.push(part));
    assert.equal(frames.length, 4, `cut ${cut}`);
    assert.equal(frames[0].payload.toString(), 'a\r\n');
    assert.deepEqual(frames[1].payloads.map(String), ['', 'xy']);
    assert.equal(frames[2].payload, undefined);
    assert.equal(frames[3].line, 'PONG');
  }
  // an old server's `deliveries` is read as failedDeliveries
  const { decodeLetters } = require('../lib/protocol');
  const letters = decodeLetters({ tokens: ['LETTERS', '1'], lines: ['LETTER tx=a deliveries=5'] });
  assert.equal(letters[0].failedDeliveries, 5);
});
