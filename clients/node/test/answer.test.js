'use strict';

// Answer, answerFromHttp and the error-to-reason mapping (no server).

const test = require('node:test');
const assert = require('node:assert/strict');
const { Answer, answerFromHttp, parseRetryAfter, reasonFromError, sanitizeReason } = require('..');

test('answerFromHttp table', () => {
  const table = [
    // [status, headers, outcome, reason, retryAfter]
    [200, undefined, 'SUCCESS', undefined, undefined],
    [201, {}, 'SUCCESS', undefined, undefined],
    [204, {}, 'SUCCESS', undefined, undefined],
    [299, {}, 'SUCCESS', undefined, undefined],
    [429, { 'retry-after': '3' }, 'TRANSIENT', 'HTTP_429', 3000],
    [503, { 'Retry-After': '1' }, 'TRANSIENT', 'HTTP_503', 1000],
    [503, { 'retry-after': '0' }, 'TRANSIENT', 'HTTP_503', 0],
    [503, {}, 'TRANSIENT', 'HTTP_503', undefined],
    [503, { 'retry-after': 'soon' }, 'TRANSIENT', 'HTTP_503', undefined],
    [429, { 'retry-after': ['2', '9'] }, 'TRANSIENT', 'HTTP_429', 2000],
    [500, { 'retry-after': '7' }, 'TRANSIENT', 'HTTP_500', undefined],
    [502, {}, 'TRANSIENT', 'HTTP_502', undefined],
    [504, {}, 'TRANSIENT', 'HTTP_504', undefined],
    [599, {}, 'TRANSIENT', 'HTTP_599', undefined],
    [408, {}, 'TRANSIENT', 'HTTP_408', undefined],
    [null, undefined, 'TRANSIENT', 'NO_RESPONSE', undefined],
    [undefined, undefined, 'TRANSIENT', 'NO_RESPONSE', undefined],
    [0, undefined, 'TRANSIENT', 'NO_RESPONSE', undefined],
    [400, {}, 'REJECTED', 'HTTP_400', undefined],
    [401, {}, 'REJECTED', 'HTTP_401', undefined],
    [404, {}, 'REJECTED', 'HTTP_404', undefined],
    [409, {}, 'REJECTED', 'HTTP_409', undefined],
    [422, {}, 'REJECTED', 'HTTP_422', undefined],
    [499, {}, 'REJECTED', 'HTTP_499', undefined],
    [301, {}, 'REJECTED', 'HTTP_301', undefined],
    [101, {}, 'REJECTED', 'HTTP_101', undefined],
  ];
  for (const [status, headers, outcome, reason, retryAfter] of table) {
    const a = answerFromHttp(status, headers);
    assert.ok(a instanceof Answer);
    assert.deepEqual({ outcome: a.outcome, reason: a.reason, retryAfter: a.retryAfter }, { outcome, reason, retryAfter }, `status ${status}`);
  }
});

test('answerFromHttp reads fetch Headers, Maps and Response-like objects', () => {
  const h = new Headers({ 'Retry-After': '4' });
  assert.equal(answerFromHttp(503, h).retryAfter, 4000);
  assert.equal(answerFromHttp(503, new Map([['Retry-After', '5']])).retryAfter, 5000);
  const res = new Response('busy', { status: 429, headers: { 'retry-after': '6' } });
  const a = answerFromHttp(res);
  assert.equal(a.outcome, 'TRANSIENT');
  assert.equal(a.retryAfter, 6000);
  assert.equal(answerFromHttp({ status: 200, headers: {} }).outcome, 'SUCCESS');
});

test('Retry-After as an HTTP-date', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:10 GMT', now), 10000);
  assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now), 0, 'a past date is now');
  const date = new Date(Date.now() + 30000).toUTCString();
  const ms = answerFromHttp(503, { 'retry-after': date }).retryAfter;
  assert.ok(ms > 25000 && ms <= 30000, `got ${ms}`);
  assert.equal(parseRetryAfter(' 12 '), 12000);
  assert.equal(parseRetryAfter('-1'), undefined);
  assert.equal(parseRetryAfter('1.5'), undefined);
  assert.equal(parseRetryAfter(''), undefined);
  assert.equal(parseRetryAfter(undefined), undefined);
  assert.equal(parseRetryAfter('99999999999999'), 3650 * 86400000, 'capped at the protocol maximum');
});

test('answerFromHttp refuses what is not a status code', () => {
  for (const bad of [99, 600, 200.5, '200', -1]) {
    assert.throws(() => answerFromHttp(bad), RangeError, String(bad));
  }
});

test('Answer factories', () => {
  assert.equal(Answer.success().outcome, 'SUCCESS');
  const c = Answer.cancelled({ reason: 'NOT_NOW' });
  assert.deepEqual([c.outcome, c.reason, c.retryAfter], ['CANCELLED', 'NOT_NOW', undefined]);
  const t = Answer.transient({ reason: 'HTTP_503', retryAfter: '2s' });
  assert.deepEqual([t.outcome, t.reason, t.retryAfter], ['TRANSIENT', 'HTTP_503', 2000]);
  assert.equal(Answer.transient({ retryAfter: 150 }).retryAfter, 150);
  const r = Answer.rejected({ reason: 'CONFLICT' });
  assert.deepEqual([r.outcome, r.reason], ['REJECTED', 'CONFLICT']);
  assert.equal(Answer.rejected().reason, undefined);
  assert.ok(Object.isFrozen(r));
  assert.throws(() => Answer.rejected({ reason: 'two words' }), RangeError);
  assert.throws(() => Answer.cancelled({ reason: 'x\r\n' }), RangeError);
  assert.throws(() => Answer.transient({ retryAfter: -5 }), RangeError);
  assert.throws(() => Answer.transient({ retryAfter: 'later' }), RangeError);
  assert.throws(() => new Answer('SUCCESS'), TypeError);
});

test('a thrown error becomes a reason token naming its class', () => {
  class PaymentGatewayDown extends Error {}
  class Named extends Error {
    constructor() {
      super('x');
      this.name = 'CustomName';
    }
  }
  assert.equal(reasonFromError(new TypeError('x')), 'TypeError');
  assert.equal(reasonFromError(new PaymentGatewayDown('x')), 'PaymentGatewayDown');
  assert.equal(reasonFromError(new Named()), 'CustomName');
  assert.equal(reasonFromError(new DOMException('aborted', 'AbortError')), 'AbortError');
  assert.equal(reasonFromError(new Error('x')), 'Error');
  assert.equal(reasonFromError('a string'), 'Error');
  assert.equal(reasonFromError(null), 'Error');
  assert.equal(reasonFromError(Object.create(null)), 'Error');
  const weird = new Error('x');
  weird.name = 'Bad Name\r\nWith ñ';
  assert.equal(reasonFromError(weird), 'Bad_Name__With__');
  const long = new Error('x');
  long.name = 'N'.repeat(300);
  assert.equal(reasonFromError(long).length, 200);
  assert.equal(sanitizeReason(''), 'Error');
  assert.equal(sanitizeReason('ok!~'), 'ok!~');
  for (const s of ['a b', '\x00', 'é'.repeat(250), 'x\ty']) {
    assert.match(sanitizeReason(s), /^[\x21-\x7E]{1,200}$/);
  }
});
