// Types for the tarde Node.js client (protocol version 1, see net/PROTOCOL.md).

/// <reference types="node" />

import { EventEmitter } from 'node:events';

/** Milliseconds as a number, or a protocol duration string: "250ms", "5s", "2m", "2h", "1d". */
export type Duration = number | string;

export type Payload = Buffer | Uint8Array | string;

export type State = 'SENDING' | 'IN_FLIGHT' | 'SCHEDULED' | 'SUCCEEDED' | 'FAILED';

export type SummaryStatus = 'CREATED' | 'EXISTS' | 'OK' | 'BURIED' | 'STALE' | 'CONFLICT';

export type Outcome = 'SUCCESS' | 'CANCELLED' | 'TRANSIENT' | 'REJECTED';

export type Resolution = 'SUCCEEDED' | 'FAILED';

/** A transaction's state after a command. Times are ms since the epoch; 0 means none. */
export interface Summary {
  status: SummaryStatus;
  txId: string;
  state: State;
  attempt: number;
  nextAttempt: number;
  nextFireAt: number;
}

/** The reply when tarde does not know the transaction (or, for REDRIVE, the dead letter). */
export interface NotFound {
  status: 'NOT_FOUND';
  txId: string;
  state: null;
  attempt: null;
  nextAttempt: null;
  nextFireAt: null;
}

export type Result = Summary | NotFound;

/** A reserved request (RESERVE). `key` is `<txId>#<attempt>`: send it as the idempotency key. */
export interface Request {
  txId: string;
  attempt: number;
  key: string;
  /** Hand-outs of this request, this one included. */
  handouts: number;
  payload: Buffer;
}

/** GET. Fields a newer server adds appear too, in camelCase. */
export interface Transaction {
  txId: string;
  queue: string;
  state: State;
  attempt: number;
  nextAttempt: number;
  maxAttempts: number;
  nextFireAt: number;
  deadlineAt: number;
  createdAt: number;
  updatedAt: number;
  /** Hand-outs of the current request that failed (older servers' `deliveries`). */
  failedDeliveries: number;
  transients: number;
  reason: string | null;
  payloadBytes: number;
  /** With `get(txId, { payload: true })` only. */
  payload?: Buffer;
  [field: string]: string | number | null | Buffer | undefined;
}

/**
 * One HISTORY event. `cause` is the command, `timer` or `lease`. A timer fire
 * carries `due` (the instant it was due) and `late` (ms after it that the fire
 * took effect); other events have null. `seq` is the event's number in the
 * transaction's life (0 the first); `dropped`, the marker of a bounded
 * history, counts the events right before this one that are no longer kept.
 * A server older than these fields gives null, null, null and 0.
 */
export interface HistoryEvent {
  at: number;
  from: State | null;
  to: State;
  attempt: number;
  nextAttempt: number;
  cause: string;
  reason: string | null;
  due: number | null;
  late: number | null;
  seq: number | null;
  dropped: number;
  [field: string]: string | number | null;
}

/** One DEADLETTERS entry. */
export interface DeadLetter {
  txId: string;
  attempt: number;
  key: string;
  /** Older servers' `deliveries`. */
  failedDeliveries: number;
  buriedAt: number;
  lastError: string;
  /** 0 is not shown by servers before the field existed: then absent. */
  payloadBytes?: number;
  /** With `deadletters(queue, { payload: true })` only. */
  payload?: Buffer;
  [field: string]: string | number | null | Buffer | undefined;
}

/** Which dead letters `redriveAll` and `resolveAll` change; limit 1-10000 (server default 100). */
export interface LetterFilter {
  prefix?: string;
  lastError?: string;
  limit?: number;
}

/** LIST's states. */
export type ListState = 'ready' | 'leased' | 'in_flight' | 'scheduled' | 'succeeded' | 'failed' | 'dead';

/** One LIST item. */
export interface ListItem {
  txId: string;
  state: State;
  attempt: number;
  nextAttempt: number;
  nextFireAt: number;
  updatedAt: number;
  deliveries: number;
  reason: string | null;
  [field: string]: string | number | null;
}

/** One LIST page; `next` is the cursor of the following page, null on the last. */
export interface ListPage {
  items: ListItem[];
  next: string | null;
}

/** LIST's options: `after` is a previous page's `next`; `limit` 1 to 1000. */
export interface ListOptions {
  after?: string;
  limit?: number;
  prefix?: string;
  reason?: string;
}

/** CONFIG reply: every setting of the queue, camelCase; durations in ms. */
export interface QueueConfig {
  maxAttempts: number;
  base: number;
  factor: number;
  cap: number;
  jitter: number;
  strictCap: number;
  transientBase: number;
  transientFactor: number;
  transientCap: number;
  maxTransient: number;
  lease: number;
  maxDeliveries: number;
  rate: number;
  responseTimeout: number;
  breaker: number;
  retention: number;
  historyMax: number;
  stuckAfter: number;
  /** 1 while the queue is paused (set by PAUSE/RESUME only). */
  paused: number;
  [setting: string]: number | string;
}

/** CONFIG settings to set (camelCase or snake_case names). */
export interface QueueSettings {
  maxAttempts?: number;
  base?: Duration;
  factor?: number | string;
  cap?: Duration;
  jitter?: number | string;
  strictCap?: boolean | 0 | 1;
  transientBase?: Duration;
  transientFactor?: number | string;
  transientCap?: Duration;
  maxTransient?: number;
  lease?: Duration;
  maxDeliveries?: number;
  rate?: number | string;
  responseTimeout?: Duration;
  breaker?: boolean | 0 | 1;
  retention?: Duration;
  historyMax?: number;
  stuckAfter?: Duration;
  [setting: string]: number | string | boolean | undefined;
}

export interface EnqueueOptions {
  maxAttempts?: number;
  base?: Duration;
  factor?: number | string;
  cap?: Duration;
  jitter?: number | string;
  strictCap?: boolean;
  deadline?: Duration;
  /** The producer already sent attempt 1 itself: the transaction starts IN_FLIGHT. */
  sent?: boolean;
  /** The first attempt waits like a retry: SCHEDULED, next_fire_at = now + delay. */
  delay?: Duration;
}

export interface ConnectOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 7400. */
  port?: number;
  /** Sent with AUTH on connect. */
  token?: string;
  /** Per-command reply timeout in ms (default 10000); a RESERVE with `wait` gets wait + timeoutMs. */
  timeoutMs?: number;
  /** Default: timeoutMs. */
  connectTimeoutMs?: number;
}

/** A raw reply frame, as `command()` resolves it. */
/** What BACKUP made: its id, size in bytes (shared files included), files, and time taken. */
export interface BackupMade {
  id: number;
  bytes: number;
  files: number;
  tookMs: number;
}

export interface Frame {
  line: string;
  tokens: string[];
  payload?: Buffer | null;
  lines?: string[];
  /** LETTERS read with payload=1: one per line. */
  payloads?: Buffer[];
  count?: number;
}

/** One connection; commands are pipelined. It never reconnects by itself. */
export class Client extends EventEmitter {
  /** Connects, then sends AUTH (with a token) or PING. */
  static connect(options?: ConnectOptions): Promise<Client>;
  private constructor();
  readonly host: string;
  readonly port: number;
  readonly timeoutMs: number;
  /** True once closed, lost, or closing. */
  readonly closed: boolean;
  /** Commands written whose replies have not arrived yet. */
  readonly pendingCount: number;

  enqueue(queue: string, txId: string, payload?: Payload, options?: EnqueueOptions): Promise<Summary>;
  /**
   * null when nothing is ready (EMPTY), after `wait` if given. With an array
   * of up to 16 queues, from whichever has work (the server rotates which it
   * tries first on each call); paused queues are skipped.
   */
  reserve(queue: string | string[], options?: { wait?: Duration }): Promise<Request | null>;
  /** Extends the lease this connection holds (status OK), else STALE. */
  touch(txId: string, attempt: number): Promise<Result>;
  /** The queue hands nothing out until resume(); idempotent. */
  pause(queue: string): Promise<'PAUSED'>;
  resume(queue: string): Promise<'RESUMED'>;
  /** How many dead letters were redriven. */
  redriveAll(queue: string, filter?: LetterFilter): Promise<number>;
  /** How many dead letters' transactions were ended. */
  resolveAll(queue: string, outcome: Resolution, options?: LetterFilter & { reason?: string }): Promise<number>;
  sent(txId: string, attempt: number): Promise<Result>;
  release(txId: string, attempt: number, options?: { delay?: Duration; reason?: string }): Promise<Result>;
  respond(
    txId: string,
    attempt: number,
    outcome: Outcome | Answer,
    options?: { reason?: string; retryAfter?: Duration },
  ): Promise<Result>;
  resolve(txId: string, outcome: Resolution, options?: { reason?: string }): Promise<Result>;
  /** null for an unknown transaction (NOT_FOUND). */
  get(txId: string, options?: { payload?: boolean }): Promise<Transaction | null>;
  /** null for an unknown transaction (NOT_FOUND). */
  history(txId: string, options?: { limit?: number }): Promise<HistoryEvent[] | null>;
  deadletters(queue: string, options?: { limit?: number; payload?: boolean }): Promise<DeadLetter[]>;
  list(queue: string, state: ListState, options?: ListOptions): Promise<ListPage>;
  redrive(queue: string, txId: string): Promise<Result>;
  config(queue: string, settings?: QueueSettings): Promise<QueueConfig>;
  stats(): Promise<Record<string, number>>;
  /** BACKUP into the server's --backup-dir; timeoutMs defaults to one hour. */
  backup(options?: { timeoutMs?: number }): Promise<BackupMade>;
  ping(): Promise<'PONG'>;
  auth(token: string): Promise<'OK'>;
  /** Any command (upper-case verb, space-free args); ERR replies reject with TardeError. */
  command(verb: string, args?: string[], payload?: Payload): Promise<Frame>;
  /** QUIT after the commands already written; resolves once the connection is closed. */
  close(): Promise<void>;
  /** Closes at once; pending commands reject with code ERR_TARDE_CLOSED. */
  destroy(): void;

  on(event: 'close', listener: (err: (Error & { code?: string }) | null) => void): this;
  once(event: 'close', listener: (err: (Error & { code?: string }) | null) => void): this;
}

/** What a handler says the external service answered. */
export class Answer {
  private constructor();
  readonly outcome: Outcome;
  readonly reason: string | undefined;
  /** Milliseconds. */
  readonly retryAfter: number | undefined;
  static success(): Answer;
  static cancelled(options?: { reason?: string; retryAfter?: Duration }): Answer;
  static transient(options?: { reason?: string; retryAfter?: Duration }): Answer;
  static rejected(options?: { reason?: string }): Answer;
}

export type Handler = (request: Request, signal: AbortSignal) => Answer | Promise<Answer>;

export interface DispatcherOptions extends ConnectOptions {
  /** Workers, each with its own connection (default 8). */
  concurrency?: number;
  /** After close(), running handlers get this long before their signal aborts (default 10000). */
  shutdownTimeoutMs?: number;
  /** After the abort, a handler that still has not returned is answered TRANSIENT SHUTDOWN this much later (default 1000). */
  abortGraceMs?: number;
  /** RESERVE wait per round (default 1000); close() can take this long for idle workers. */
  reserveWaitMs?: number;
  /** Reconnect backoff: base and cap in ms (defaults 100 and 5000), jittered. */
  reconnectBaseMs?: number;
  reconnectMaxMs?: number;
  /** Close gracefully on SIGTERM/SIGINT (a second signal stops at once). Default false. */
  handleSignals?: boolean;
  /** Where connection trouble is reported (warn); default console, null for silence. */
  logger?: { warn(message: string): void } | null;
}

export interface DispatcherStats {
  reserved: number;
  handled: number;
  success: number;
  cancelled: number;
  transient: number;
  rejected: number;
  handlerErrors: number;
  released: number;
  stale: number;
  reconnects: number;
}

export class Dispatcher extends EventEmitter {
  constructor(queue: string, handler: Handler, options?: DispatcherOptions);
  readonly queue: string;
  readonly concurrency: number;
  readonly stats: DispatcherStats;
  /** Handlers running now. */
  readonly running: number;
  /** Starts the workers; nothing runs before. Returns this. */
  start(): this;
  /** Stops reserving, lets handlers finish (then aborts them), releases what is held, closes connections. */
  close(): Promise<void>;

  on(event: 'connect', listener: (workerId: number) => void): this;
  on(event: 'disconnect', listener: (err: Error & { code?: string }, workerId: number) => void): this;
  on(event: 'handlerError', listener: (err: unknown, request: Request) => void): this;
  on(event: 'respondError', listener: (err: Error, request: Request) => void): this;
  on(event: 'close', listener: () => void): this;
}

export type ErrorCode =
  | 'BAD_COMMAND'
  | 'BAD_ARGUMENT'
  | 'UNAUTHORIZED'
  | 'INTERNAL'
  | 'LINE_TOO_LONG'
  | 'PAYLOAD_TOO_LARGE'
  | 'BAD_PAYLOAD'
  | 'OVERLOADED'
  | 'SHUTTING_DOWN';

/** An `ERR <CODE> <message>` reply. */
export class TardeError extends Error {
  constructor(code: string, serverMessage?: string, command?: string | null);
  readonly name: 'TardeError';
  readonly code: ErrorCode | string;
  readonly serverMessage: string;
  /** The verb of the command that got the error (null when unsolicited). */
  readonly command: string | null;
  /** The server closes the connection after this error. */
  readonly closesConnection: boolean;
}

export const ERROR_CODES: Readonly<Record<ErrorCode, Readonly<{ closesConnection: boolean; description: string }>>>;

/** HTTP status (or a fetch Response) -> Answer. null/undefined/0 = no response. */
export function answerFromHttp(
  status: number | null | undefined | { status: number; headers?: unknown },
  headers?: Headers | Map<string, string> | Record<string, string | string[] | undefined>,
): Answer;

/** A Retry-After value (seconds or HTTP-date) -> ms, or undefined. */
export function parseRetryAfter(value: string | string[] | null | undefined, now?: number): number | undefined;

/** A thrown value -> a reason TOKEN naming its class. */
export function reasonFromError(err: unknown): string;

/** Any text -> a reason TOKEN (1-200 bytes of 0x21-0x7E). */
export function sanitizeReason(text: string): string;

/** The streaming reply parser (exported for tests and tools). */
export class ReplyParser {
  push(chunk: Buffer): Frame[];
  readonly idle: boolean;
}
