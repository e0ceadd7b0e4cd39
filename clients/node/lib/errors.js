'use strict';

// Every ERR code of protocol version 1 (net/PROTOCOL.md, "Errors").
// closesConnection: the server closes the connection after this reply.
const ERROR_CODES = Object.freeze({
  BAD_COMMAND: Object.freeze({
    closesConnection: false,
    description: 'unknown verb, wrong number of positional arguments, empty line',
  }),
  BAD_ARGUMENT: Object.freeze({
    closesConnection: false,
    description: 'a token or option fails its form or range',
  }),
  UNAUTHORIZED: Object.freeze({
    closesConnection: false,
    description: 'no AUTH yet, or a wrong token',
  }),
  INTERNAL: Object.freeze({
    closesConnection: false,
    description: 'the store refused the write; the command was not acknowledged (retrying is safe)',
  }),
  LINE_TOO_LONG: Object.freeze({
    closesConnection: true,
    description: 'a line over 8192 bytes',
  }),
  PAYLOAD_TOO_LARGE: Object.freeze({
    closesConnection: true,
    description: 'a payload over the server\'s --max-payload',
  }),
  BAD_PAYLOAD: Object.freeze({
    closesConnection: true,
    description: 'the payload is not followed by CRLF, or the length is not a number',
  }),
  OVERLOADED: Object.freeze({
    closesConnection: true,
    description: 'the connection is over the server\'s --max-connections',
  }),
  SHUTTING_DOWN: Object.freeze({
    closesConnection: true,
    description: 'the server is stopping (SIGTERM or SIGINT)',
  }),
  NOT_CONFIGURED: Object.freeze({
    closesConnection: false,
    description: 'the command needs a server setting that is not set (BACKUP: --backup-dir)',
  }),
  BUSY: Object.freeze({
    closesConnection: false,
    description: 'a backup is already running; BACKUP again once it has answered',
  }),
  BACKUP_FAILED: Object.freeze({
    closesConnection: false,
    description: 'the backup failed; no new backup was recorded',
  }),
});

/** An `ERR <CODE> <message>` reply from the server. */
class TardeError extends Error {
  constructor(code, serverMessage, command) {
    super(serverMessage ? `${code}: ${serverMessage}` : String(code));
    this.name = 'TardeError';
    this.code = code;
    this.serverMessage = serverMessage || '';
    this.command = command || null;
    const known = ERROR_CODES[code];
    this.closesConnection = known ? known.closesConnection : false;
  }
}

/** A network-level failure: an Error whose `code` is ECONNRESET, ETIMEDOUT, EPROTO, ... */
function connectionError(code, message, cause) {
  const err = cause ? new Error(message, { cause }) : new Error(message);
  err.code = code;
  return err;
}

module.exports = { ERROR_CODES, TardeError, connectionError };
