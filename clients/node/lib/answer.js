'use strict';

const { checkReason, formatDuration, parseDuration, MAX_DURATION_MS, describe } = require('./protocol');

/** What a handler says the external service answered; becomes a RESPOND. */
class Answer {
  constructor(outcome, reason, retryAfter, secret) {
    if (secret !== Answer._secret) {
      throw new TypeError('use Answer.success(), Answer.cancelled(), Answer.transient() or Answer.rejected()');
    }
    this.outcome = outcome;
    this.reason = reason;
    this.retryAfter = retryAfter;
    Object.freeze(this);
  }

  static _make(outcome, options) {
    const o = options == null ? {} : options;
    if (typeof o !== 'object') throw new TypeError(`options must be an object, got ${describe(o)}`);
    const reason = o.reason === undefined || o.reason === null ? undefined : checkReason(o.reason);
    let retryAfter;
    if (o.retryAfter !== undefined && o.retryAfter !== null) {
      formatDuration(o.retryAfter, 'retryAfter'); // throws when malformed
      retryAfter = typeof o.retryAfter === 'string' ? parseDuration(o.retryAfter) : o.retryAfter;
    }
    return new Answer(outcome, reason, retryAfter, Answer._secret);
  }

  /** The service did it: the transaction SUCCEEDED. */
  static success() {
    return Answer._make('SUCCESS');
  }

  /** "Not now": spends the attempt; the next one waits the CANCELLED backoff (or FAILED at max_attempts). */
  static cancelled(options) {
    return Answer._make('CANCELLED', options);
  }

  /** Timeout, 503, 429, lost connection: the same attempt is re-sent after the transient backoff. */
  static transient(options) {
    return Answer._make('TRANSIENT', options);
  }

  /** A permanent refusal: the transaction FAILED. */
  static rejected(options) {
    return Answer._make('REJECTED', options);
  }
}
Answer._secret = Symbol('Answer');

/** Any thrown value -> a protocol TOKEN naming its class (1-200 bytes of 0x21-0x7E). */
function reasonFromError(err) {
  let name;
  if (err !== null && typeof err === 'object') {
    // err.name says TypeError, AbortError, ...; a subclass that did not set
    // its name (class PaymentDown extends Error {}) is named by its class.
    const own = typeof err.name === 'string' ? err.name : '';
    const ctor = err.constructor && typeof err.constructor.name === 'string' ? err.constructor.name : '';
    name = own && own !== 'Error' ? own : ctor || own;
  }
  return sanitizeReason(name || 'Error');
}

/** Any text -> a protocol TOKEN: bytes outside 0x21-0x7E become '_', at most 200. */
function sanitizeReason(text) {
  const s = String(text).replace(/[^\x21-\x7E]/g, '_').slice(0, 200);
  return s.length > 0 ? s : 'Error';
}

function getHeader(headers, name) {
  if (headers == null) return undefined;
  if (typeof headers.get === 'function') {
    // fetch Headers (case-insensitive) or a Map
    const v = headers.get(name);
    if (v !== undefined && v !== null) return v;
    if (headers instanceof Map) {
      for (const [k, val] of headers) if (String(k).toLowerCase() === name) return val;
    }
    return undefined;
  }
  if (typeof headers === 'object') {
    for (const k of Object.keys(headers)) if (k.toLowerCase() === name) return headers[k];
  }
  return undefined;
}

/** A Retry-After value (delay-seconds or an HTTP-date) -> milliseconds, or undefined. */
function parseRetryAfter(value, now = Date.now()) {
  let v = value;
  if (Array.isArray(v)) v = v[0];
  if (v === undefined || v === null) return undefined;
  v = String(v).trim();
  if (v === '') return undefined;
  if (/^\d+$/.test(v)) return Math.min(Number(v) * 1000, MAX_DURATION_MS);
  // An HTTP-date (IMF-fixdate, RFC 850 or asctime) starts with a day name.
  if (!/^(Mon|Tue|Wed|Thu|Fri|Sat|Sun)/i.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.min(Math.max(0, Math.ceil(at - now)), MAX_DURATION_MS);
}

/**
 * An HTTP answer -> an Answer. `status` is the status code (or a fetch
 * Response, whose headers are then used); null/undefined/0 means no response
 * arrived (a timeout or a network error).
 *   2xx            SUCCESS
 *   429, 503       TRANSIENT, with Retry-After (seconds or HTTP-date) as retryAfter
 *   408, other 5xx TRANSIENT
 *   no response    TRANSIENT (reason NO_RESPONSE)
 *   other 4xx      REJECTED
 *   1xx, 3xx       REJECTED (not an answer a client can act on)
 * "Not now" (CANCELLED) is a business answer: the handler decides it.
 */
function answerFromHttp(status, headers) {
  let code = status;
  let hdrs = headers;
  if (code !== null && typeof code === 'object') {
    hdrs = hdrs === undefined ? code.headers : hdrs;
    code = code.status;
  }
  if (code === undefined || code === null || code === 0) return Answer.transient({ reason: 'NO_RESPONSE' });
  if (!Number.isInteger(code) || code < 100 || code > 599) {
    throw new RangeError(`status must be an HTTP status code (100-599), got ${describe(code)}`);
  }
  const reason = `HTTP_${code}`;
  if (code >= 200 && code < 300) return Answer.success();
  if (code === 429 || code === 503) {
    return Answer.transient({ reason, retryAfter: parseRetryAfter(getHeader(hdrs, 'retry-after')) });
  }
  if (code === 408 || code >= 500) return Answer.transient({ reason });
  return Answer.rejected({ reason });
}

module.exports = { Answer, answerFromHttp, parseRetryAfter, reasonFromError, sanitizeReason };
