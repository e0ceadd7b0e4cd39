// Compiled (never run) against index.d.ts to check the published types:
//   npx -p typescript -p @types/node tsc -p clients/node/types-check
// (see the client README). Every line is something a user would write.
import { Client, Dispatcher, Answer, TardeError, ERROR_CODES, answerFromHttp } from 'tarde';
import type { Request, Transaction, Summary, Result, HistoryEvent, DeadLetter, QueueConfig, BackupMade, ListPage } from 'tarde';

async function producer(): Promise<void> {
  const client: Client = await Client.connect({ host: '127.0.0.1', port: 7400, token: 's3cret', timeoutMs: 5000 });
  const created: Summary = await client.enqueue('payments', 'TX-1', JSON.stringify({ amount: 1250 }), {
    maxAttempts: 4,
    base: '2h',
    jitter: 0.1,
    deadline: 86_400_000,
  });
  const state: string = created.state;
  const tx: Transaction | null = await client.get('TX-1');
  if (tx !== null) console.log(tx.nextFireAt, tx.reason ?? '-', state);
  const events: HistoryEvent[] | null = await client.history('TX-1', { limit: 10 });
  const letters: DeadLetter[] = await client.deadletters('payments');
  let page: ListPage = await client.list('payments', 'scheduled', { limit: 100 });
  while (page.next !== null) page = await client.list('payments', 'scheduled', { after: page.next, prefix: 'TX-' });
  console.log(page.items.map((item) => `${item.txId} ${item.state} ${item.reason ?? '-'}`));
  const cfg: QueueConfig = await client.config('payments', { transientBase: '50ms', transientCap: 200, breaker: false });
  const stats: Record<string, number> = await client.stats();
  const backup: BackupMade = await client.backup({ timeoutMs: 600_000 });
  console.log(backup.id, backup.bytes, backup.files, backup.tookMs);
  const req: Request | null = await client.reserve('payments', { wait: '5s' });
  const any: Request | null = await client.reserve(['payments', 'refunds'], { wait: 1000 });
  if (any) console.log(any.handouts, (await client.touch(any.txId, any.attempt)).status);
  const paused: 'PAUSED' = await client.pause('payments');
  await client.resume('payments');
  const redriven: number = await client.redriveAll('payments', { prefix: 'TX-', lastError: 'LEASE_EXPIRED', limit: 500 });
  const resolved: number = await client.resolveAll('payments', 'FAILED', { reason: 'GAVE_UP' });
  const withBody: Transaction | null = await client.get('TX-1', { payload: true });
  const bodies: DeadLetter[] = await client.deadletters('payments', { payload: true, limit: 10 });
  console.log(paused, redriven, resolved, withBody?.payload?.length, bodies[0]?.failedDeliveries);
  if (req) {
    const payload: Buffer = req.payload;
    const r: Result = await client.respond(req.txId, req.attempt, 'TRANSIENT', { reason: 'HTTP_503', retryAfter: 1000 });
    if (r.status === 'NOT_FOUND') console.log(r.state === null);
    await client.respond(req.txId, req.attempt, Answer.success());
    await client.release(req.txId, req.attempt, { delay: '2s', reason: 'SOCKET_RESET' });
    console.log(payload.length);
  }
  await client.resolve('TX-1', 'FAILED', { reason: 'BY_HAND' });
  await client.redrive('payments', 'TX-1');
  const pong: 'PONG' = await client.ping();
  console.log(events, letters, cfg.maxAttempts, stats.transactions, pong);
  try {
    await client.command('NOSUCHVERB');
  } catch (err) {
    if (err instanceof TardeError && err.code === 'BAD_COMMAND') console.log(err.serverMessage, ERROR_CODES.BAD_COMMAND.closesConnection);
  }
  client.on('close', (err) => console.log(err?.code));
  await client.close();
}

const dispatcher = new Dispatcher(
  'payments',
  async (request: Request, signal: AbortSignal): Promise<Answer> => {
    const res = await fetch('http://127.0.0.1:8080/charge', {
      method: 'POST',
      headers: { 'Idempotency-Key': request.key },
      body: request.payload,
      signal,
    });
    if (res.status === 200 && ((await res.json()) as { result?: string }).result === 'not_now') return Answer.cancelled({ reason: 'NOT_NOW' });
    return answerFromHttp(res.status, res.headers);
  },
  { port: 7400, concurrency: 8, shutdownTimeoutMs: 30_000, reserveWaitMs: 1000, handleSignals: true, logger: console },
).start();
dispatcher.on('disconnect', (err, worker) => console.log(err.code, worker));
console.log(dispatcher.stats.success, dispatcher.running);
void dispatcher.close().then(producer);

// @ts-expect-error: Answer has no public constructor
new Answer();
// @ts-expect-error: outcomes are the protocol's words
void Answer.rejected({ retryAfter: 5 });
