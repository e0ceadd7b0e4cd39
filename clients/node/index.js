'use strict';

const { Client } = require('./lib/client');
const { Dispatcher } = require('./lib/dispatcher');
const { Answer, answerFromHttp, parseRetryAfter, reasonFromError, sanitizeReason } = require('./lib/answer');
const { TardeError, ERROR_CODES } = require('./lib/errors');
const { ReplyParser } = require('./lib/parser');

module.exports = {
  Client,
  Dispatcher,
  Answer,
  TardeError,
  ERROR_CODES,
  answerFromHttp,
  parseRetryAfter,
  reasonFromError,
  sanitizeReason,
  ReplyParser,
};
