const csrf = document.querySelector('meta[name="csrf-token"]').content;
const usd = (micros) => `$${(micros / 1e6).toFixed(2)}`;
function list(id, rows, empty = 'None yet') {
  const target = typeof id === 'string' ? document.getElementById(id) : id;
  target.replaceChildren(...rows.flatMap(([name, value]) => {
    const dt = document.createElement('dt'); dt.textContent = name;
    const dd = document.createElement('dd');
    if (value instanceof Node) dd.append(value); else dd.textContent = value;
    return [dt, dd];
  }));
  if (rows.length === 0) { const dd = document.createElement('dd'); dd.className = 'muted empty'; dd.textContent = empty; target.append(dd); }
}
function bars(id, values, format) {
  const width = 480, height = 120, max = Math.max(1, ...values), step = width / values.length;
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', `0 0 ${width} ${height + 14}`);
  values.forEach((value, index) => {
    const rect = document.createElementNS(ns, 'rect');
    const h = Math.round((value / max) * height);
    rect.setAttribute('x', index * step + 1); rect.setAttribute('y', height - h);
    rect.setAttribute('width', Math.max(1, step - 2)); rect.setAttribute('height', h); rect.setAttribute('class', 'bar');
    const title = document.createElementNS(ns, 'title'); title.textContent = format(value); rect.append(title);
    svg.append(rect);
  });
  const axis = document.createElementNS(ns, 'line');
  axis.setAttribute('x1', 0); axis.setAttribute('x2', width); axis.setAttribute('y1', height); axis.setAttribute('y2', height);
  axis.setAttribute('class', 'axis'); svg.append(axis);
  const label = document.createElementNS(ns, 'text');
  label.setAttribute('x', 0); label.setAttribute('y', height + 12); label.setAttribute('font-size', 11); label.setAttribute('fill', 'currentColor');
  label.textContent = `max ${format(max)}`; svg.append(label);
  document.getElementById(id).replaceChildren(svg);
}
async function refresh() {
  const response = await fetch('/console/api/overview', { credentials: 'same-origin' });
  if (response.status === 401 || response.status === 403) { location.href = '/console/login'; return; }
  const o = await response.json();
  const c = o.calls;
  list('calls', [['In progress', c.in_progress], ['Today', c.today], ['Answered today', c.answered_today],
    ['Answer rate', c.answer_rate == null ? '–' : `${Math.round(c.answer_rate * 100)} %`],
    ['Average duration', c.average_duration_seconds == null ? '–' : `${Math.round(c.average_duration_seconds)} s of ${Math.round(c.average_limit_seconds)} s`]]);
  bars('calls-chart', c.per_hour, (v) => `${v} calls`);
  list('reasons', c.ended_reasons.map((r) => [r.name, r.count]), 'No call ended today');
  list('users', [['Accounts', o.users.total], ...o.users.by_plan.map((p) => [`Plan: ${p.name}`, p.count])]);
  list('spend', o.spend.flatMap((s) => [[`${s.feature} today`, s.daily_budget_usd_micros == null ? usd(s.today_usd_micros) : `${usd(s.today_usd_micros)} of ${usd(s.daily_budget_usd_micros)}`],
    [`${s.feature} this month`, s.monthly_budget_usd_micros == null ? usd(s.month_usd_micros) : `${usd(s.month_usd_micros)} of ${usd(s.monthly_budget_usd_micros)}`]]));
  bars('spend-chart', o.spend.reduce((sum, s) => sum.map((v, i) => v + s.per_day[i]), new Array(14).fill(0)), usd);
  list('jobs', [['Pending', o.jobs.pending], ['Running', o.jobs.running], ['Failed', o.jobs.failed], ...o.jobs.failed_by_kind.map((k) => [`Failed: ${k.name}`, k.count])]);
  list('appstore', o.app_store_notifications.map((n) => [n.name, n.count]), 'No App Store notifications yet');
  const providers = document.getElementById('providers');
  providers.replaceChildren(...o.providers.map((p) => row([p.provider, p.operation, p.status, p.calls,
    `${(p.error_rate * 100).toFixed(1)} %`, p.p50_ms == null ? '–' : `${p.p50_ms} / ${p.p95_ms} ms`,
    p.last_failure == null ? '–' : `${p.last_failure} at ${new Date(p.last_failure_at).toLocaleTimeString()}`], { 2: p.status === 'ok' ? 'good' : 'bad' })));
  if (o.providers.length === 0) providers.replaceChildren(row(['No provider calls in the last 15 minutes', '', '', '', '', '', '']));
  const audit = await (await fetch('/console/api/audit', { credentials: 'same-origin' })).json();
  document.getElementById('audit').replaceChildren(...audit.entries.map((e) => {
    const li = document.createElement('li');
    const [kind, id] = e.target.split(':');
    const open = kind === 'user' ? () => openUser(id) : kind === 'call' ? () => openCall(id) : null;
    li.append(`${when(e.created_at)} ${e.actor}: ${e.action} `, open ? link(e.target, open) : e.target, ` (${e.detail ?? ''})`);
    return li;
  }));
  if (audit.entries.length === 0) {
    const li = document.createElement('li'); li.className = 'muted empty'; li.textContent = 'No audit entries yet: every operator action will be listed here.';
    document.getElementById('audit').replaceChildren(li);
  }
}
document.getElementById('rerun-job-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const id = document.getElementById('rerun-job').value.trim();
  show(document.getElementById('rerun-result'), await post(`/console/api/jobs/${encodeURIComponent(id)}/rerun`));
  refresh();
});
async function reviewReport(id, status, disable) {
  const response = await fetch(`/console/api/reports/${encodeURIComponent(id)}/status`, {
    method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' },
    body: JSON.stringify(disable ? { status, disable_scenario: true } : { status }) });
  const body = await response.json();
  show(document.getElementById('report-result'), { ok: response.ok, text: response.ok ? `Report ${id}: ${body.detail}` : errorText(body, response.status) });
  refreshReports(); refresh();
}
async function refreshReports() {
  const open = [];
  let pending = 0;
  for (const status of ['pending', 'reviewed']) {
    const response = await fetch(`/console/api/reports?status=${status}`, { credentials: 'same-origin' });
    if (!response.ok) return;
    const queue = await response.json();
    pending = queue.pending; open.push(...queue.reports);
  }
  document.getElementById('reports-pending').textContent = `(${pending} pending)`;
  const rows = open.map((r) => {
    const subject = r.call_sid ? `call ${r.call_sid} (${r.subject_scenario ?? '?'})` : r.scenario_id;
    const tr = row([new Date(r.created_at).toLocaleString(), r.reason,
      `${subject}${r.subject_text ? `: ${r.subject_text}` : ''}${r.scenario_disabled_at ? ' [disabled]' : ''}`, r.description, r.status, '']);
    if (r.call_sid) {
      // The reported call opens its detail view (looked up by its SID).
      const open = link(`call ${r.call_sid}`, () => lookUp(r.call_sid));
      tr.children[2].replaceChildren(open, tr.children[2].textContent.slice(`call ${r.call_sid}`.length));
    }
    const cell = tr.lastElementChild;
    const actions = [['Reviewed', 'reviewed', false], ['Resolve', 'resolved', false], ['Dismiss', 'dismissed', false]];
    if (r.subject_scenario?.startsWith('custom_') && !r.scenario_disabled_at) actions.splice(2, 0, ['Resolve and disable scenario', 'resolved', true]);
    for (const [label, status, disable] of actions) {
      if (status === r.status) continue;
      const button = document.createElement('button'); button.type = 'button'; button.textContent = label;
      button.addEventListener('click', () => reviewReport(r.id, status, disable));
      cell.append(button, ' ');
    }
    return tr;
  });
  document.getElementById('reports').replaceChildren(...rows);
  if (rows.length === 0) document.getElementById('reports').replaceChildren(row(['No open reports', '', '', '', '', '']));
}
async function refreshOptOuts() {
  const response = await fetch('/console/api/opt-outs', { credentials: 'same-origin' });
  if (!response.ok) return;
  const o = await response.json();
  list('optouts', [['Numbers on the list', o.total], ['Added in 24 h', o.last_day], ['Added in 7 days', o.last_week],
    ['By speech', o.by_speech], ['By key', o.by_key]]);
}
document.getElementById('optout-remove').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = document.getElementById('optout-number');
  const response = await fetch('/console/api/opt-outs/remove', {
    method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' },
    body: JSON.stringify({ phone_number: input.value.trim() }) });
  const body = await response.json();
  show(document.getElementById('optout-result'), { ok: response.ok, text: response.ok ? `${body.target}: ${body.detail}` : errorText(body, response.status) });
  if (response.ok) input.value = '';
  refreshOptOuts(); refresh();
});
// MARK: Look-up and detail views

function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (name === 'class') node.className = value; else if (name === 'text') node.textContent = value; else node.setAttribute(name, value);
  }
  node.append(...children.filter((c) => c != null));
  return node;
}
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '–');
// An error answer as a sentence: the detail (a string or {message}), then each field's problem.
function errorText(body, status) {
  const detail = typeof body?.detail === 'string' ? body.detail : body?.detail?.message;
  const fields = (body?.errors ?? []).map((e) => e.message).join('; ');
  return [detail && detail !== 'Validation error' ? detail : null, fields || null].filter(Boolean).join(': ') || `The server answered HTTP ${status}`;
}
async function post(path, body) {
  try {
    const response = await fetch(path, {
      method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body) });
    const json = await response.json().catch(() => ({}));
    return { ok: response.ok, text: response.ok ? json.detail : errorText(json, response.status) };
  } catch (error) {
    return { ok: false, text: `The server could not be reached (${error.message})` };
  }
}
function show(target, result) {
  target.textContent = result.text;
  target.className = result.ok ? 'good' : 'bad';
  target.setAttribute('role', result.ok ? 'status' : 'alert');
}
// A destructive action asks first, in place: the button becomes the question with "Yes" and "Cancel".
function confirmButton(label, question, yes, run) {
  const holder = el('span', { class: 'confirmable' });
  const button = el('button', { type: 'button', class: 'danger' }, label);
  holder.append(button);
  button.addEventListener('click', () => {
    const ok = el('button', { type: 'button', class: 'danger' }, yes);
    const cancel = el('button', { type: 'button', class: 'secondary' }, 'Cancel');
    const ask = el('span', { class: 'confirm', role: 'group', 'aria-label': question }, el('span', {}, question), ' ', ok, ' ', cancel);
    holder.replaceChildren(ask);
    ok.focus();
    cancel.addEventListener('click', () => { holder.replaceChildren(button); button.focus(); });
    ok.addEventListener('click', async () => { ok.disabled = true; cancel.disabled = true; await run(); holder.replaceChildren(button); });
  });
  return holder;
}
function link(text, open) {
  const button = el('button', { type: 'button', class: 'link' }, text);
  button.addEventListener('click', open);
  return button;
}
function table(headings, rows, empty) {
  if (rows.length === 0) return el('p', { class: 'muted empty' }, empty);
  const head = el('tr', {}, ...headings.map((h) => el('th', { scope: 'col' }, h)));
  return el('table', {}, el('thead', {}, head), el('tbody', {}, ...rows.map((cells) => el('tr', {}, ...cells.map((c) => el('td', {}, c))))));
}
const detail = document.getElementById('detail');
async function load(path) {
  try {
    const response = await fetch(path, { credentials: 'same-origin' });
    if (response.status === 401) { location.href = '/console/login'; return null; }
    const body = await response.json().catch(() => ({}));
    if (!response.ok) { detail.replaceChildren(el('p', { class: 'bad', role: 'alert' }, errorText(body, response.status))); return null; }
    return body;
  } catch (error) {
    detail.replaceChildren(el('p', { class: 'bad', role: 'alert' }, `The server could not be reached (${error.message})`));
    return null;
  }
}
function view(kind, heading, ...parts) {
  detail.replaceChildren(el('article', { class: 'detail', 'data-kind': kind }, el('h3', { id: 'detail-title' }, heading), ...parts));
  detail.scrollIntoView({ block: 'nearest' });
}

async function openUser(id, message) {
  const u = await load(`/console/api/users/${encodeURIComponent(id)}`);
  if (!u) return;
  const usage = u.usage;
  // The plan that decides the limits: the best active subscription's tier (as the overview counts users).
  const tiers = u.subscriptions.filter((s) => s.active && s.tier).map((s) => s.tier);
  const tier = tiers.includes('premium') ? 'premium' : tiers[0];
  const plan = tier ? `${tier[0].toUpperCase()}${tier.slice(1)}`
    : usage.is_trial_active ? `Trial (${usage.trial_calls_remaining} of ${usage.trial_calls_remaining + usage.trial_calls_used} calls left)` : 'No plan';
  const facts = el('dl', { id: 'user-facts' });
  list(facts, [['Plan', plan], ['Role', u.role], ['Signed up', when(u.created_at)],
    ['Calls today / week / month', `${usage.calls_made_today} / ${usage.calls_made_this_week} / ${usage.calls_made_this_month}`],
    ['Calls in all', u.total_calls],
    ['Add-on calls left', usage.addon_calls_remaining ? `${usage.addon_calls_remaining} (until ${when(usage.addon_calls_expiry)})` : '0'],
    ['App sessions', u.active_sessions],
    ['AI spend this month', usd(u.provider_usage.reduce((sum, i) => sum + i.usd_micros, 0))],
    ...u.subscriptions.map((s) => [`Subscription ${s.product_id}`, `${s.active ? 'active' : 'inactive'}, until ${when(s.expires_at)}${s.will_renew ? ', renews' : ''}`])]);
  const result = el('p', { id: 'user-action-result', role: 'status' });
  if (message) show(result, message);
  const revoke = confirmButton('Revoke sessions', `Sign ${u.email} out on every device?`, 'Yes, revoke', async () => {
    const done = await post(`/console/api/users/${encodeURIComponent(u.id)}/revoke-sessions`);
    if (done.ok) openUser(u.id, done); else show(result, done);
    refresh();
  });
  const grant = el('form', { id: 'grant-form', class: 'row' },
    el('label', { for: 'grant-calls' }, 'Grant calls'), el('input', { id: 'grant-calls', type: 'number', min: '1', max: '100', value: '1', required: '' }),
    el('label', { for: 'grant-days' }, 'valid for days'), el('input', { id: 'grant-days', type: 'number', min: '1', max: '365', value: '30', required: '' }),
    el('button', { type: 'submit' }, 'Grant calls'));
  grant.addEventListener('submit', async (event) => {
    event.preventDefault();
    const done = await post(`/console/api/users/${encodeURIComponent(u.id)}/grant-calls`,
      { calls: Number(grant.querySelector('#grant-calls').value), days: Number(grant.querySelector('#grant-days').value) });
    if (done.ok) openUser(u.id, done); else show(result, done);
    refresh();
  });
  const calls = table(['Call', 'Number', 'Scenario', 'Status', 'When', 'Time / limit'], u.recent_calls.map((c) => [
    link(`Call ${c.id}`, () => openCall(c.id, { id: u.id, email: u.email })), c.phone_number, c.scenario,
    c.ended_reason ? `${c.status} (${c.ended_reason})` : c.status, when(c.created_at),
    `${c.duration_seconds ?? '–'} / ${c.duration_limit} s`]), 'No calls yet.');
  const stories = table(['Story', 'Hero', 'Status', 'Created'], u.recent_stories.map((s) => [
    link(s.title ?? 'Untitled story', () => openStory(s.id)), s.hero_name, s.status, when(s.created_at)]), 'No stories yet.');
  view('user', `User ${u.email}`, el('p', { class: 'muted' }, `id ${u.id}`), facts,
    el('div', { class: 'actions row' }, revoke), grant, result,
    el('h4', {}, `Recent calls (${u.recent_calls.length} of ${u.total_calls})`), el('div', { id: 'user-calls' }, calls),
    el('h4', {}, 'Stories'), el('div', { id: 'user-stories' }, stories));
}

async function openCall(id, owner, message) {
  const c = await load(`/console/api/calls/${encodeURIComponent(id)}`);
  if (!c) return;
  if (!owner) {
    // Opened from a list that does not name the user (live calls, the audit log): the look-up by call id does.
    const found = await fetch(`/console/api/lookup?q=${encodeURIComponent(id)}`, { credentials: 'same-origin' }).then((r) => (r.ok ? r.json() : null), () => null);
    const match = found?.matches.find((m) => m.kind === 'call');
    if (match) owner = { id: match.user_id, email: match.user_email };
  }
  const facts = el('dl', { id: 'call-facts' });
  list(facts, [
    ['User', owner ? link(owner.email, () => openUser(owner.id)) : '–'], ['Number', c.phone_number], ['Scenario', c.scenario],
    ['Status', c.ended_reason ? `${c.status} (${c.ended_reason})` : c.status], ['Call SID', c.call_sid],
    ['Placed', when(c.created_at)], ['Answered', when(c.answered_at)], ['Ended', when(c.ended_at)],
    ['Time / limit', `${c.duration_seconds ?? '–'} / ${c.duration_limit} s`],
    ['Cost', `${usd(c.cost.usd_micros)} (${c.cost.items.map((i) => `${i.operation} ${i.model} ${usd(i.usd_micros)}`).join(', ') || 'nothing metered'})`]]);
  const result = el('p', { id: 'call-action-result', role: 'status' });
  if (message) show(result, message);
  const refund = confirmButton('Refund', `Give call ${c.id} back to its user's quota?`, 'Yes, refund', async () => {
    const done = await post(`/console/api/calls/${encodeURIComponent(c.id)}/refund`);
    show(result, done);
    refresh();
  });
  const lines = c.transcript == null
    ? el('p', { class: 'muted empty' }, c.transcript_deleted_at ? `Transcript deleted ${when(c.transcript_deleted_at)}.` : 'No transcript.')
    : c.transcript.length === 0 ? el('p', { class: 'muted empty' }, 'No transcript yet (it is kept once the call is over).')
      : el('ol', { class: 'transcript', id: 'call-transcript' }, ...c.transcript.map((l) => el('li', { class: l.speaker },
        el('span', { class: 'who' }, `${l.speaker}, ${(l.at_ms / 1000).toFixed(1)} s`), l.text)));
  view('call', `Call ${c.id}`, facts, el('div', { class: 'actions row' }, refund), result,
    el('h4', {}, 'Transcript ', el('a', { href: `/console/api/calls/${encodeURIComponent(c.id)}`, target: '_blank', rel: 'noopener' }, '(as JSON)')), lines);
}

async function openStory(id, message) {
  const s = await load(`/console/api/stories/${encodeURIComponent(id)}`);
  if (!s) return;
  const stages = Object.entries(s.stages).map(([name, status]) => `${name} ${status}`).join(', ');
  const facts = el('dl', { id: 'story-facts' });
  list(facts, [['User', link(s.user_email, () => openUser(s.user_id))], ['Hero', s.hero_name], ['Event', s.event_title],
    ['Language / voice', `${s.language} / ${s.voice}`], ['Length', `${s.length_minutes} min, ${s.illustration_count} picture${s.illustration_count === 1 ? '' : 's'}`],
    ['Stages', stages], ['Failure', s.failure ?? '–'], ['Cost', usd(s.cost.usd_micros)], ['Created', when(s.created_at)]]);
  const result = el('p', { id: 'story-action-result', role: 'status' });
  if (message) show(result, message);
  const jobs = s.failed_jobs.map((job) => el('li', {}, `Job ${job.id} (${job.kind}) failed: ${job.last_error ?? 'no error recorded'} `,
    confirmButton('Run again', `Run job ${job.id} (${job.kind}) again now?`, 'Yes, run it', async () => {
      const done = await post(`/console/api/jobs/${encodeURIComponent(job.id)}/rerun`);
      if (done.ok) openStory(s.id, done); else show(result, done);
      refresh();
    })));
  const pictures = s.illustrations.filter((i) => i.url).map((i) => el('img', { src: i.url, alt: `Picture ${i.number}`, loading: 'lazy' }));
  view('story', s.title ?? `Untitled story about ${s.hero_name}`, el('p', { class: 'muted' }, `id ${s.id}`), facts,
    jobs.length ? el('ul', { id: 'story-jobs' }, ...jobs) : el('p', { class: 'muted empty' }, 'No failed jobs.'), result,
    el('h4', {}, 'Text'), s.content ? el('div', { class: 'story-text' }, s.content) : el('p', { class: 'muted empty' }, 'Not written yet.'),
    s.audio?.url ? el('audio', { controls: '', src: s.audio.url, preload: 'none' }) : null,
    pictures.length ? el('div', { class: 'pictures' }, ...pictures) : null);
}

function openMatch(match) {
  const owner = { id: match.user_id, email: match.user_email };
  if (match.kind === 'user') return openUser(match.id);
  if (match.kind === 'call') return openCall(match.id, owner);
  return openStory(match.id);
}
// Looks `q` up as if typed in the box.
function lookUp(q) {
  document.getElementById('lookup-q').value = q;
  document.getElementById('lookup').requestSubmit();
  document.getElementById('look-h').scrollIntoView();
}
document.getElementById('lookup').addEventListener('submit', async (event) => {
  event.preventDefault();
  const error = document.getElementById('lookup-error');
  const matches = document.getElementById('lookup-matches');
  error.textContent = ''; matches.replaceChildren(); detail.replaceChildren();
  const q = document.getElementById('lookup-q').value;
  let response, body;
  try {
    response = await fetch(`/console/api/lookup?q=${encodeURIComponent(q)}`, { credentials: 'same-origin' });
    body = await response.json().catch(() => ({}));
  } catch (failure) { error.textContent = `The server could not be reached (${failure.message})`; return; }
  if (!response.ok) { error.textContent = errorText(body, response.status); return; }
  const note = body.on_do_not_call_list == null ? null
    : el('p', { class: body.on_do_not_call_list ? 'warn' : 'muted' }, `${body.query} is ${body.on_do_not_call_list ? '' : 'not '}on the do-not-call list.`);
  if (body.matches.length === 1) { matches.replaceChildren(...[note].filter(Boolean)); openMatch(body.matches[0]); return; }
  matches.replaceChildren(...[note].filter(Boolean), el('p', {}, `${body.matches.length} matches for ${body.query}:`),
    el('ul', { class: 'matches' }, ...body.matches.map((m) => el('li', {}, `${m.kind}: `, link(m.label, () => openMatch(m)),
      m.kind === 'user' ? null : el('span', { class: 'muted' }, ` (${m.user_email})`)))));
});
function row(cells, classes = {}) {
  const tr = document.createElement('tr');
  cells.forEach((value, index) => {
    const td = document.createElement('td'); td.textContent = value;
    if (classes[index]) td.className = classes[index];
    tr.append(td);
  });
  return tr;
}

// Calls in progress, pushed by the server (server-sent events); the time on each call counts up every second.
const live = { calls: [], lines: new Map() };
function drawLive() {
  const now = Date.now();
  const body = document.getElementById('live-calls');
  body.replaceChildren(...live.calls.map((call) => {
    const since = call.answered_at ? Math.max(0, Math.round((now - Date.parse(call.answered_at)) / 1000)) : null;
    const line = live.lines.get(call.call_sid);
    const tr = row(['', call.phone_number, call.scenario, call.status,
      since == null ? `– / ${call.duration_limit} s` : `${since} / ${call.duration_limit} s`, line ? `${line.speaker}: ${line.text}` : '']);
    tr.firstElementChild.append(link(`Call ${call.id}`, () => openCall(call.id)));
    tr.dataset.callSid = call.call_sid ?? '';
    return tr;
  }));
  if (live.calls.length === 0) body.replaceChildren(row(['No call in progress', '', '', '', '', '']));
}
// A change in the calls refreshes the figures too, at most every 2 s.
let refreshTimer = null;
function refreshSoon() {
  if (refreshTimer) return;
  refreshTimer = setTimeout(() => { refreshTimer = null; refresh(); }, 2000);
}
function connectLive() {
  const source = new EventSource('/console/api/live');
  const state = document.getElementById('live-state');
  source.addEventListener('open', () => { state.textContent = '(live)'; });
  source.addEventListener('calls', (event) => {
    live.calls = JSON.parse(event.data).calls;
    const current = new Set(live.calls.map((c) => c.call_sid));
    for (const sid of live.lines.keys()) if (!current.has(sid)) live.lines.delete(sid);
    drawLive();
    refreshSoon();
  });
  source.addEventListener('transcript', (event) => {
    const progress = JSON.parse(event.data);
    live.lines.set(progress.call_sid, progress.line);
    drawLive();
  });
  source.addEventListener('error', () => { state.textContent = '(reconnecting…)'; });
}
connectLive();
setInterval(drawLive, 1000);
refresh();
setInterval(refresh, 15000);
refreshReports();
setInterval(refreshReports, 15000);
refreshOptOuts();
setInterval(refreshOptOuts, 15000);
