// The tarde dashboard: a few pages over the JSON API of net/HTTP_API.md.
// Text from the server (tx ids, reasons, payloads: all client-provided) is
// only ever inserted with textContent; nothing here builds markup from text.
'use strict';

const TOKEN_KEY = 'tarde.token';
const POLL_KEY = 'tarde.poll';
// The states the queue page lists (the API's /list); queue summaries count
// all but the terminal ones.
const STATES = ['ready', 'leased', 'in_flight', 'scheduled', 'succeeded', 'failed', 'dead'];
const OVERVIEW_STATS = ['transactions', 'sending', 'in_flight', 'scheduled', 'succeeded',
  'failed', 'ready', 'leased', 'dead_letters', 'connections', 'timers_fired'];

let pollTimer = null;
let countdownTimer = null;
let render = null;  // the current page's refresh function

// ---- small DOM helpers ----------------------------------------------------
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key === 'onclick') node.addEventListener('click', value);
    else if (key === 'onchange') node.addEventListener('change', value);
    else if (key === 'dataset') Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}
function svg(tag, attrs) {
  const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  return node;
}
const page = () => document.getElementById('page');
// Puts a page's parts in place; parts left out (null) are skipped, as el() does.
function showPage(...parts) {
  page().replaceChildren(...parts.flat(Infinity).filter(part => part !== null && part !== undefined));
}
function showError(message) {
  const box = document.getElementById('error');
  box.textContent = message || '';
  box.hidden = !message;
}
function when(ms) { return ms ? new Date(ms).toISOString().replace('T', ' ').replace('Z', '') : '-'; }
function duration(ms) {
  if (ms === null || ms === undefined) return '-';
  const negative = ms < 0;
  let s = Math.abs(ms) / 1000;
  let text;
  if (s < 1) text = Math.round(s * 1000) + ' ms';
  else if (s < 120) text = s.toFixed(1) + ' s';
  else if (s < 7200) text = (s / 60).toFixed(1) + ' min';
  else if (s < 172800) text = (s / 3600).toFixed(1) + ' h';
  else text = (s / 86400).toFixed(1) + ' d';
  return negative ? '-' + text : text;
}
function link(hash, text) { return el('a', { href: hash, text }); }
function txLink(id) { return link('#/tx/' + encodeURIComponent(id), id); }

// ---- the API --------------------------------------------------------------
class Unauthorized extends Error {}

async function api(path, options) {
  const headers = { Accept: 'application/json' };
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = 'Bearer ' + token;
  const init = { method: 'GET', headers, cache: 'no-store' };
  if (options && options.body !== undefined) {
    init.method = 'POST';
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(options.body);
  }
  const response = await fetch('/api/v1' + path, init);
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) throw new Unauthorized();
  if (!response.ok) {
    const message = body.error ? body.error.message : response.statusText;
    const error = new Error(response.status + ': ' + message);
    error.status = response.status;
    throw error;
  }
  return body;
}
function askForToken() {
  document.getElementById('token-form').hidden = false;
  document.getElementById('token').focus();
}

// ---- charts ---------------------------------------------------------------
// A line chart of one or more series over the samples' times; own SVG code.
function chart(title, samples, series) {
  const width = 600, height = 120, left = 36, bottom = 14;
  const box = svg('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img' });
  const values = series.flatMap(s => samples.map(s.value));
  const top = Math.max(1, ...values);
  const t0 = samples.length ? samples[0].at_ms : 0;
  const t1 = samples.length ? samples[samples.length - 1].at_ms : 1;
  const x = t => left + (width - left - 4) * (t1 === t0 ? 1 : (t - t0) / (t1 - t0));
  const y = v => (height - bottom) - (height - bottom - 6) * (v / top);
  box.append(svg('line', { x1: left, y1: height - bottom, x2: width, y2: height - bottom, class: 'axis' }));
  box.append(svg('line', { x1: left, y1: 4, x2: left, y2: height - bottom, class: 'axis' }));
  const topLabel = svg('text', { x: 2, y: 12, class: 'label' });
  topLabel.textContent = Number.isInteger(top) ? String(top) : top.toFixed(1);
  box.append(topLabel);
  const span = svg('text', { x: left, y: height - 2, class: 'label' });
  span.textContent = samples.length ? duration(t1 - t0) + ' shown' : 'no samples yet';
  box.append(span);
  series.forEach((s, i) => {
    if (!samples.length) return;
    const points = samples.map(p => `${x(p.at_ms).toFixed(1)},${y(s.value(p)).toFixed(1)}`);
    box.append(svg('polyline', { points: points.join(' '), class: 'series s' + i }));
  });
  const legend = el('div', { class: 'legend' },
    series.map((s, i) => el('span', { class: 'k' + i, text: '— ' + s.name })));
  return el('div', { class: 'chart', dataset: { chart: title } }, el('h3', { text: title }), box, legend);
}

// ---- pages ----------------------------------------------------------------
async function overviewPage() {
  const [stats, queues, rates] = await Promise.all([api('/stats'), api('/queues'), api('/rates')]);
  const tiles = el('dl', { class: 'tiles', id: 'stats' }, OVERVIEW_STATS.map(name =>
    el('div', { class: 'tile' }, el('dt', { text: name }),
      el('dd', { dataset: { stat: name }, text: stats.stats[name] ?? '-' }))));
  const columns = ['ready', 'leased', 'in_flight', 'scheduled', 'dead'];
  const table = el('table', { id: 'queues' },
    el('thead', {}, el('tr', {}, el('th', { text: 'queue' }),
      columns.map(c => el('th', { class: 'num', text: c })),
      el('th', { class: 'num', text: 'oldest ready' }), el('th', { class: 'num', text: 'hand-outs/s' }),
      el('th', { text: 'breaker' }), el('th', { text: 'paused' }), el('th', { text: '' }))),
    el('tbody', {}, queues.queues.map(q => el('tr', { dataset: { queue: q.name } },
      el('td', {}, link('#/queue/' + encodeURIComponent(q.name), q.name)),
      columns.map(c => el('td', { class: 'num', dataset: { field: c }, text: q[c] })),
      el('td', { class: 'num', text: q.oldest_ready_age_ms ? duration(q.oldest_ready_age_ms) : '-' }),
      el('td', { class: 'num', dataset: { field: 'handout_rate' }, text: q.handout_rate.toFixed(2) }),
      el('td', { class: 'state-' + q.breaker, text: q.breaker }),
      el('td', { dataset: { field: 'paused' }, text: q.paused ? 'paused' : '' }),
      el('td', {}, link('#/dead/' + encodeURIComponent(q.name), 'dead letters'))))));
  const s = rates.samples;
  const answers = ['SUCCESS', 'CANCELLED', 'TRANSIENT', 'REJECTED'];
  const charts = el('div', { class: 'charts', id: 'charts' },
    chart('Hand-outs per second', s, [{ name: 'hand-outs', value: p => p.handed_out }]),
    chart('Answers per second', s, answers.map(a => ({ name: a, value: p => p.answers[a] }))),
    chart('Retries fired per second', s, [{ name: 'retries fired', value: p => p.retries_fired }]),
    chart('Retry lateness p99 (ms)', s, [{ name: 'p99', value: p => p.lateness_p99_ms }]));
  showPage(el('h2', { text: 'Overview' }), tiles, el('h3', { text: 'Queues' }),
    countingNote(queues.queues.some(q => q.counting)),
    queues.queues.length ? table : el('p', { class: 'muted', text: 'No queues yet.' }),
    el('h3', { text: 'Last 15 minutes' }), charts);
}

// Shown while the store is counted after a start: some counts are partial.
function countingNote(counting) {
  return el('p', { class: 'muted', id: 'counting', hidden: !counting, text: 'Counting the store after the start: ' +
    'in flight, scheduled and dead show only what changed since then until the count is done.' });
}

// The attempt a listed transaction is at: the one sent while IN_FLIGHT, else
// the one it is waiting to make (a SENDING request's first is 1, not 0).
function attemptOf(item) {
  return item.state === 'IN_FLIGHT' || !item.next_attempt ? item.attempt : item.next_attempt;
}

// A state tab of one queue, paged with a cursor.
// The tab, cursor and filters of the queue shown; another queue starts afresh.
const queueView = { queue: '', state: 'ready', after: '', prefix: '', reason: '' };
async function queuePage(queue) {
  if (queueView.queue !== queue) Object.assign(queueView, { queue, state: 'ready', after: '', prefix: '', reason: '' });
  const q = await api('/queues/' + encodeURIComponent(queue));
  const params = new URLSearchParams({ state: queueView.state, limit: '50' });
  if (queueView.after) params.set('after', queueView.after);
  if (queueView.prefix) params.set('prefix', queueView.prefix);
  if (queueView.reason) params.set('reason', queueView.reason);
  let list = null, listError = null;
  try { list = await api('/queues/' + encodeURIComponent(queue) + '/list?' + params); }
  catch (e) { if (e instanceof Unauthorized) throw e; listError = e.message; }
  const tabs = el('div', { class: 'tabs', role: 'tablist' }, STATES.map(state =>
    el('button', { type: 'button', dataset: { state }, 'aria-pressed': String(state === queueView.state),
      text: q[state] === undefined ? state : `${state} (${q[state]})`,
      onclick: () => { Object.assign(queueView, { state, after: '' }); refresh(); } })));
  const prefix = el('input', { id: 'filter-prefix', placeholder: 'tx id prefix', value: queueView.prefix });
  const reason = el('input', { id: 'filter-reason', placeholder: 'reason (exact)', value: queueView.reason });
  const filters = el('form', { class: 'filters', id: 'filters' }, prefix, reason,
    el('button', { type: 'submit', id: 'apply-filter', text: 'Filter' }));
  filters.addEventListener('submit', event => {
    event.preventDefault();
    Object.assign(queueView, { prefix: prefix.value, reason: reason.value, after: '' });
    refresh();
  });
  const pause = el('button', { type: 'button', id: q.paused ? 'resume' : 'pause',
    text: q.paused ? 'Resume queue' : 'Pause queue',
    onclick: () => act(`/queues/${encodeURIComponent(queue)}/${q.paused ? 'resume' : 'pause'}`, {}) });
  const rows = list ? list.items.map(item => el('tr', { dataset: { tx: item.tx_id } },
    el('td', {}, txLink(item.tx_id)),
    el('td', { text: item.state || queueView.state }),
    el('td', { class: 'num', text: attemptOf(item) }),
    el('td', { text: item.last_error ?? item.reason ?? '' }),
    el('td', { text: when(item.buried_at_ms || item.leased_at_ms || item.updated_at_ms || item.next_fire_at_ms) }))) : [];
  const table = el('table', { id: 'list' }, el('thead', {}, el('tr', {},
    ['tx id', 'state', 'attempt', 'reason', 'at'].map(h => el('th', { text: h })))), el('tbody', {}, rows));
  const paging = el('div', { class: 'filters' },
    el('button', { type: 'button', id: 'first', text: 'First', disabled: !queueView.after,
      onclick: () => { queueView.after = ''; refresh(); } }),
    el('button', { type: 'button', id: 'next', text: 'Next', disabled: !(list && list.next),
      onclick: () => { queueView.after = list.next; refresh(); } }));
  const config = el('dl', { class: 'kv', id: 'config' }, Object.entries(q.config.settings).map(
    ([k, v]) => [el('dt', { text: k }), el('dd', { text: v })]));
  showPage(
    el('h2', {}, 'Queue ', el('span', { id: 'queue-name', text: queue }), ' ', q.paused ? el('span', { class: 'muted', text: '(paused)' }) : null),
    el('div', { class: 'filters' }, pause, link('#/dead/' + encodeURIComponent(queue), 'dead letters')),
    countingNote(q.counting), tabs, filters, listError ? el('p', { class: 'error', text: listError }) : table, paging,
    el('h3', { text: 'Config' }), config);
}

const deadView = { queue: '', after: '', prefix: '', reason: '', selected: new Set() };
async function deadPage(queue) {
  if (deadView.queue !== queue) {
    Object.assign(deadView, { queue, after: '', prefix: '', reason: '' });
    deadView.selected.clear();
  }
  const base = '/queues/' + encodeURIComponent(queue) + '/dead';
  const params = new URLSearchParams({ limit: '50' });
  if (deadView.after) params.set('after', deadView.after);
  if (deadView.prefix) params.set('prefix', deadView.prefix);
  if (deadView.reason) params.set('reason', deadView.reason);
  const list = await api(base + '?' + params);
  const filter = { prefix: deadView.prefix, reason: deadView.reason };
  const prefix = el('input', { id: 'filter-prefix', placeholder: 'tx id prefix', value: deadView.prefix });
  const reason = el('input', { id: 'filter-reason', placeholder: 'last error (exact)', value: deadView.reason });
  const filters = el('form', { class: 'filters' }, prefix, reason,
    el('button', { type: 'submit', id: 'apply-filter', text: 'Filter' }));
  filters.addEventListener('submit', event => {
    event.preventDefault();
    Object.assign(deadView, { prefix: prefix.value, reason: reason.value, after: '' });
    deadView.selected.clear();
    refresh();
  });
  const bulk = async (action, body, count) => {
    if (!count) return;
    const verb = action === 'redrive' ? 'Redrive' : 'Resolve as FAILED';
    if (!window.confirm(`${verb} ${count} dead letter${count === 1 ? '' : 's'} of ${queue}?`)) return;
    if (action === 'resolve') { body.state = 'FAILED'; body.reason = 'resolved-from-dashboard'; }
    await act(base + '/' + action, body);
    deadView.selected.clear();
  };
  const selectedIds = () => [...deadView.selected];
  const matching = list.items.length + (list.next ? '+' : '');
  const buttons = el('div', { class: 'filters' },
    el('button', { type: 'button', id: 'redrive-selected', text: 'Redrive selected',
      onclick: () => bulk('redrive', { ids: selectedIds() }, selectedIds().length) }),
    el('button', { type: 'button', id: 'resolve-selected', class: 'danger', text: 'Resolve selected as FAILED',
      onclick: () => bulk('resolve', { ids: selectedIds() }, selectedIds().length) }),
    el('button', { type: 'button', id: 'redrive-matching', text: `Redrive all matching (${matching})`,
      onclick: () => matchingAction('redrive') }),
    el('button', { type: 'button', id: 'resolve-matching', class: 'danger', text: 'Resolve all matching as FAILED',
      onclick: () => matchingAction('resolve') }));
  // Everything the filter matches, counted over every page first, so that
  // the confirmation states the number that will change.
  async function matchingAction(action) {
    let count = 0, after = '';
    do {
      const p = new URLSearchParams({ limit: '1000' });
      if (after) p.set('after', after);
      if (filter.prefix) p.set('prefix', filter.prefix);
      if (filter.reason) p.set('reason', filter.reason);
      const page = await api(base + '?' + p);
      count += page.items.length;
      after = page.next;
    } while (after && count < 1000);
    await bulk(action, { filter, limit: Math.max(1, Math.min(count, 1000)) }, count);
  }
  const all = el('input', { type: 'checkbox', id: 'select-all', onchange: event => {
    for (const item of list.items) {
      if (event.target.checked) deadView.selected.add(item.tx_id); else deadView.selected.delete(item.tx_id);
    }
    refresh();
  } });
  const table = el('table', { id: 'dead' }, el('thead', {}, el('tr', {}, el('th', {}, all),
    ['tx id', 'attempt', 'failed deliveries', 'buried at', 'last error'].map(h => el('th', { text: h })))),
  el('tbody', {}, list.items.map(item => el('tr', { dataset: { tx: item.tx_id } },
    el('td', {}, el('input', { type: 'checkbox', class: 'select', checked: deadView.selected.has(item.tx_id),
      'aria-label': 'select', onchange: event => {
        if (event.target.checked) deadView.selected.add(item.tx_id); else deadView.selected.delete(item.tx_id);
      } })),
    el('td', {}, txLink(item.tx_id)), el('td', { class: 'num', text: item.attempt }),
    el('td', { class: 'num', text: item.failed_deliveries }), el('td', { text: when(item.buried_at_ms) }),
    el('td', { text: item.last_error })))));
  const paging = el('div', { class: 'filters' },
    el('button', { type: 'button', id: 'first', text: 'First', disabled: !deadView.after,
      onclick: () => { deadView.after = ''; refresh(); } }),
    el('button', { type: 'button', id: 'next', text: 'Next', disabled: !list.next,
      onclick: () => { deadView.after = list.next; refresh(); } }));
  showPage(el('h2', {}, 'Dead letters of ', link('#/queue/' + encodeURIComponent(queue), queue)),
    filters, buttons, table, paging);
}

const txView = { encoding: 'text' };
async function txPage(id) {
  const path = '/tx/' + encodeURIComponent(id);
  const [tx, history] = await Promise.all([api(path + '?payload=' + txView.encoding), api(path + '/history')]);
  const summary = el('dl', { class: 'kv', id: 'tx-summary' }, [
    ['tx id', tx.tx_id], ['queue', tx.queue], ['state', tx.state], ['attempt', tx.attempt],
    ['next attempt', tx.next_attempt], ['max attempts', tx.max_attempts], ['failed deliveries', tx.failed_deliveries],
    ['reason', tx.reason || '-'], ['created', when(tx.created_at_ms)], ['updated', when(tx.updated_at_ms)],
    ['dead letter', tx.dead_lettered ? 'yes' : 'no'],
  ].map(([k, v]) => [el('dt', { text: k }), el('dd', { dataset: { field: k }, text: v })]));
  const next = tx.next_fire_at_ms || (tx.due.kind !== 'none' ? tx.due.at_ms : 0);
  const countdown = el('p', { id: 'countdown' });
  const tick = () => {
    if (!next) { countdown.textContent = 'no timer pending'; return; }
    const left = next - Date.now();
    countdown.textContent = (tx.due.kind === 'retention' ? 'purged in ' : 'next fire in ') +
      (left > 0 ? duration(left) : 'now (due)') + ' — at ' + when(next);
  };
  tick();
  clearInterval(countdownTimer);
  countdownTimer = setInterval(tick, 1000);
  const timeline = el('ol', { class: 'timeline', id: 'timeline' }, history.events.map(e =>
    el('li', {}, el('div', { class: 'when', text: when(e.at_ms) }),
      e.dropped ? el('div', { class: 'muted', text: `${e.dropped} older event${e.dropped === 1 ? '' : 's'} no longer kept` }) : null,
      el('div', { text: `${e.from} → ${e.to}  attempt ${e.attempt}${e.next_attempt ? ', next ' + e.next_attempt : ''}  by ${e.cause}` }),
      e.late_ms !== null ? el('div', { class: 'muted', text: `due ${when(e.due_at_ms)}, fired ${duration(e.late_ms)} late` }) : null,
      e.reason ? el('div', { class: 'muted', text: 'reason: ' + e.reason }) : null)));
  const plan = el('table', { id: 'plan' }, el('thead', {}, el('tr', {},
    ['attempt', 'after CANCELLED of', 'wait (min)', 'wait (nominal)', 'wait (max)'].map(h => el('th', { text: h })))),
  el('tbody', {}, tx.plan.map(p => el('tr', {}, el('td', { text: p.attempt }), el('td', { text: p.after_cancelled_attempt }),
    el('td', { text: duration(p.wait_ms_min) }), el('td', { text: duration(p.wait_ms) }), el('td', { text: duration(p.wait_ms_max) })))));
  const encoding = el('select', { id: 'payload-encoding', onchange: event => { txView.encoding = event.target.value; refresh(); } },
    ['text', 'hex', 'base64'].map(v => el('option', { value: v, selected: v === txView.encoding, text: v })));
  const payload = el('details', { id: 'payload' }, el('summary', { text: `Payload (${tx.payload_bytes} bytes)` }),
    encoding, el('pre', { id: 'payload-data', text: tx.payload ? tx.payload.data : '' }));
  const actions = el('div', { class: 'filters' },
    tx.dead_lettered ? el('button', { type: 'button', id: 'tx-redrive', text: 'Redrive',
      onclick: () => window.confirm('Redrive ' + tx.tx_id + '?') && act(path + '/redrive', {}) }) : null,
    tx.state !== 'SUCCEEDED' && tx.state !== 'FAILED' ? el('button', { type: 'button', id: 'tx-resolve', class: 'danger',
      text: 'Resolve as FAILED', onclick: () => window.confirm('Resolve ' + tx.tx_id + ' as FAILED?') &&
        act(path + '/resolve', { state: 'FAILED', reason: 'resolved-from-dashboard' }) }) : null);
  const failures = tx.failures.length ? el('ul', {}, tx.failures.map(f =>
    el('li', { text: when(f.at_ms) + ' ' + f.reason }))) : el('p', { class: 'muted', text: 'none' });
  showPage(el('h2', {}, 'Transaction ', el('span', { text: tx.tx_id })), summary, countdown, actions,
    tx.lease ? el('p', { text: `leased for ${duration(tx.lease.held_ms)}, expires ${when(tx.lease.expires_at_ms)}` }) : null,
    el('h3', { text: 'History' }), timeline, el('h3', { text: 'Backoff plan of the remaining attempts' }),
    tx.plan.length ? plan : el('p', { class: 'muted', text: 'no attempts left' }),
    el('h3', { text: 'Failed deliveries of the current request' }), failures, payload);
  if (txView.open) payload.open = true;
  payload.addEventListener('toggle', () => { txView.open = payload.open; });
}

async function inflightPage() {
  const leases = await api('/leases?limit=1000');
  const queues = await api('/queues');
  const table = el('table', { id: 'leases' }, el('thead', {}, el('tr', {},
    ['tx id', 'queue', 'attempt', 'connection', 'leased for', 'expires in'].map(h => el('th', { text: h })))),
  el('tbody', {}, leases.items.map(l => el('tr', { dataset: { tx: l.tx_id } }, el('td', {}, txLink(l.tx_id)),
    el('td', { text: l.queue }), el('td', { class: 'num', text: l.attempt }), el('td', { class: 'num', text: l.connection }),
    el('td', { text: duration(l.held_ms) }), el('td', { text: duration(l.expires_at_ms - leases.now_ms) })))));
  const inflight = [];
  for (const q of queues.queues.filter(q => q.in_flight > 0)) {
    try {
      const list = await api('/queues/' + encodeURIComponent(q.name) + '/list?state=in_flight&limit=100');
      inflight.push(...list.items.map(item => ({ ...item, queue: q.name })));
    } catch (e) {
      if (e instanceof Unauthorized) throw e;
      inflight.push({ tx_id: null, queue: q.name, note: e.message });
    }
  }
  const flying = el('table', { id: 'inflight' }, el('thead', {}, el('tr', {},
    ['tx id', 'queue', 'attempt', 'in flight since', 'for', 'answer due in'].map(h => el('th', { text: h })))),
  el('tbody', {}, inflight.map(t => t.tx_id === null
    ? el('tr', {}, el('td', { class: 'muted', text: '-' }), el('td', { text: t.queue }), el('td', { colspan: 4, class: 'muted', text: t.note }))
    : el('tr', { dataset: { tx: t.tx_id } }, el('td', {}, txLink(t.tx_id)), el('td', { text: t.queue }),
      el('td', { class: 'num', text: t.attempt }), el('td', { text: when(t.updated_at_ms) }),
      el('td', { text: duration(leases.now_ms - t.updated_at_ms) }),
      el('td', { text: t.due.kind === 'response_timeout' ? duration(t.due.at_ms - leases.now_ms) : '-' })))));
  showPage(el('h2', { text: 'In flight' }), el('h3', { text: 'Leased to dispatchers' }),
    leases.items.length ? table : el('p', { class: 'muted', text: 'Nothing is leased.' }),
    el('h3', { text: 'IN_FLIGHT (sent, awaiting an answer)' }),
    inflight.length ? flying : el('p', { class: 'muted', text: 'Nothing is in flight.' }));
}

// ---- actions, routing and polling ------------------------------------------
async function act(path, body) {
  try {
    const result = await api(path, { body });
    const changed = result.changed !== undefined ? `${result.changed} of ${result.selected} changed`
      : (result.outcome || 'done');
    showError('');
    document.getElementById('updated').textContent = 'action: ' + changed;
  } catch (e) {
    if (e instanceof Unauthorized) { askForToken(); return; }
    showError(e.message);
  }
  await refresh();
}

function route() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const parts = hash.split('/').map(decodeURIComponent);
  clearInterval(countdownTimer);
  if (parts[1] === 'queue' && parts[2]) return () => queuePage(parts[2]);
  if (parts[1] === 'dead' && parts[2]) return () => deadPage(parts[2]);
  if (parts[1] === 'tx' && parts[2]) return () => txPage(parts.slice(2).join('/'));
  if (parts[1] === 'inflight') return inflightPage;
  return overviewPage;
}

async function refresh() {
  if (!render) return;
  try {
    await render();
    showError('');
    document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (e) {
    if (e instanceof Unauthorized) askForToken(); else showError(e.message);
  }
}

function schedulePolling() {
  clearInterval(pollTimer);
  pollTimer = null;
  const seconds = Number(document.getElementById('poll').value);
  if (seconds > 0 && !document.hidden) pollTimer = setInterval(refresh, seconds * 1000);
}

function start() {
  const poll = document.getElementById('poll');
  poll.value = sessionStorage.getItem(POLL_KEY) || poll.value;
  poll.addEventListener('change', () => { sessionStorage.setItem(POLL_KEY, poll.value); schedulePolling(); });
  document.getElementById('refresh').addEventListener('click', refresh);
  document.getElementById('token-form').addEventListener('submit', event => {
    event.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById('token').value);
    document.getElementById('token').value = '';
    document.getElementById('token-form').hidden = true;
    document.getElementById('forget-token').hidden = false;
    refresh();
  });
  const forget = document.getElementById('forget-token');
  forget.hidden = !sessionStorage.getItem(TOKEN_KEY);
  forget.addEventListener('click', () => { sessionStorage.removeItem(TOKEN_KEY); forget.hidden = true; refresh(); });
  // No polling while the tab is hidden; one refresh when it shows again.
  document.addEventListener('visibilitychange', () => {
    schedulePolling();
    if (!document.hidden) refresh();
  });
  window.addEventListener('hashchange', () => { render = route(); refresh(); });
  render = route();
  refresh();
  schedulePolling();
}

document.addEventListener('DOMContentLoaded', start);
